//! The context assembler: plans of budgeted sections (SPEC §4).
