//! The vault: arc frontmatter and HTML-comment markers (SPEC §2.2, §2.3).
