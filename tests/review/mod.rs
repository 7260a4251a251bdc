//! The review page (`vidprep review`): pages in a real headless Chromium over WebDriver (the
//! harness itself, seeking, boxes, what the model sees, captions), and untrusted run folders.

// boxes drawn on the page, round trip (was tests/review_boxes.rs)
mod boxes;
// the WebDriver harness itself (was tests/browser_harness.rs)
mod browser_harness;
// the page end to end in headless Chromium (and the helpers the others use) (was tests/review.rs)
mod browser_page;
// Chromium's `<video>` seeking on our MP4s (was tests/browser_seek.rs)
mod browser_seek;
// timeline captions fit their tiles (was tests/field_review.rs)
mod field_cases;
// untrusted run folders (was tests/review_hostile.rs)
mod hostile;
// "what the model sees" (was tests/review_model.rs)
mod model;
