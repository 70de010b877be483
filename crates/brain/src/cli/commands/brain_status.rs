//! `brain status`: the project, the store's generation, items by status, and every active
//! signal (items and vault alike, most urgent first).

use brain_core::Severity;

use brain_api::app::{Brain, Context};
use brain_api::error::BrainResult;
use brain_api::output::Out;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(context: &Context, _args: Args, json: bool) -> BrainResult<()> {
    let brain = Brain::open(context)?;
    let report = brain_api::status::status(&brain)?;
    let mut out = Out::new();
    if json {
        out.json(&report);
        return Ok(());
    }
    out.line(format!("project     {}", report.project));
    if let Some(folder) = &report.project_name_held_by {
        out.line(format!(
            "            (this folder's project name is held by {folder}; `brain project link` here shares it)"
        ));
    }
    if let Some(error) = &report.project_ties_error {
        out.line(format!("            (this folder has a project of its own: {error})"));
    }
    out.line(format!("home        {}", report.home.as_deref().unwrap_or_default()));
    out.line(format!("generation  {}", report.generation));
    let counts: Vec<String> = report.by_status.iter().map(|(status, count)| format!("{status} {count}")).collect();
    out.line(format!("items       {}", counts.join(", ")));
    // What sessions used of what they were given, week by week (`brain why-used ID`).
    let weeks: Vec<String> = report
        .use_rate
        .iter()
        .filter(|week| week.given > 0)
        .map(|week| {
            let date = brain_core::time::format_timestamp(week.until);
            format!(
                "week to {}: {} of {} given used ({:.0}% of tokens, {} sessions)",
                &date[..10.min(date.len())],
                week.used,
                week.given,
                100.0 * week.token_share(),
                week.sessions
            )
        })
        .collect();
    match weeks.as_slice() {
        [] => out.line("use         no session's use recorded in the last four weeks"),
        [first, rest @ ..] => {
            out.line(format!("use         {first}"));
            for week in rest {
                out.line(format!("            {week}"));
            }
        }
    }
    if report.signals.is_empty() {
        out.line("signals     none active");
        return Ok(());
    }
    out.line(format!("signals     {} active", report.signals.len()));
    for signal in &report.signals {
        let severity = match signal.severity {
            Severity::Nuclear => "NUCLEAR".to_string(),
            severity => severity.to_string(),
        };
        let place = signal.file.as_deref().unwrap_or(&signal.id);
        let title = if signal.title.trim().is_empty() { signal.text.as_str() } else { signal.title.as_str() };
        let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
        out.line(format!("  [{severity}] {title} ({}, {place})", signal.source));
    }
    Ok(())
}
