//! The HTTP client brain uses toward servers it was configured to talk to: a remote brain,
//! a sync server, an embeddings endpoint, the LLM of the AI phases.

use std::time::Duration;

use ureq::http::Uri;

/// The HTTP client brain uses toward a server it was configured to talk to (a remote brain,
/// an embeddings endpoint): one deadline for the whole exchange, no proxy for loopback (a
/// proxy from HTTP_PROXY / ALL_PROXY cannot reach this machine's loopback), 4xx/5xx bodies
/// read rather than turned into a bare code, no redirects (an API never redirects; one is
/// reported with where to rather than followed without the token), the platform's roots.
pub fn http_agent(base_url: &str, timeout: Duration) -> ureq::Agent {
    let mut config = ureq::Agent::config_builder();
    if is_loopback(base_url) {
        config = config.proxy(None);
    }
    config
        .timeout_global(Some(timeout))
        .timeout_connect(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!("brain/", env!("CARGO_PKG_VERSION")))
        .tls_config(ureq::tls::TlsConfig::builder().root_certs(ureq::tls::RootCerts::PlatformVerifier).build())
        .build()
        .into()
}

/// True when the URL's host is this machine (`localhost`, 127.0.0.0/8, `[::1]`).
pub fn is_loopback(base_url: &str) -> bool {
    let Some(host) = base_url.parse::<Uri>().ok().and_then(|uri| uri.host().map(str::to_ascii_lowercase)) else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}
