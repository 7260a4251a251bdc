//! The review page (`vidprep review`): pages in a real headless Chromium over WebDriver (the
//! harness itself, seeking, boxes, what the model sees, captions), and untrusted run folders.

mod boxes;
mod browser_harness;
mod browser_page;
mod browser_seek;
mod field_cases;
mod hostile;
mod model;
