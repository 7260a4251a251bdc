//! Following a package's frames (`follow_package`): a frames export with a profile reads a
//! `vidprep parity` record of the same source, profile and options, and shows at each
//! position the frame the package showed there (`reference.positions[].package_shows`, found
//! by `vidprep parity` against a plain sequential FFmpeg decode), even where the package's
//! reader shows another frame than the index it names (torchcodec on packed B-frames). A
//! record of another source, profile or request is refused, naming both; so is a record whose
//! package pictures matched no frame (nothing to follow there).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::profiles::Applied;
use crate::records::sidecar::SourceRecord;

/// The largest parity record read (a record of 20 million positions is far below it).
const MAX_RECORD_BYTES: u64 = 1 << 30;

/// What a parity record says, as far as following it needs.
#[derive(Clone, Debug)]
pub(crate) struct FollowedRecord {
    /// The record's file.
    pub path: PathBuf,
    /// The source as `vidprep parity` was given it.
    source: String,
    /// The source as vidprep read it then (size, frames, picture size, duration).
    source_record: Value,
    /// The profile checked.
    profile: String,
    /// Its request: count, fps and options.
    request: Request,
    /// The package, its version and its reader (`qwen-vl-utils 0.0.14 (torchcodec)`).
    pub package: String,
    /// The indices vidprep's profile named, by position.
    vidprep_names: Vec<usize>,
    /// The indices the package named, by position.
    package_names: Vec<usize>,
    /// The frame the package showed at each position; `None` where its picture matched none
    /// of the frames looked at.
    package_shows: Vec<Option<usize>>,
    /// How the record found what the package showed (`reference` or `bit-exact`).
    pub found_by: &'static str,
}

/// The request a record was made for (and an export asks).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Request {
    pub count: Option<usize>,
    pub fps: Option<f64>,
    pub options: BTreeMap<String, f64>,
}

impl Request {
    fn text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.count {
            parts.push(format!("count {n}"));
        }
        if let Some(f) = self.fps {
            parts.push(format!("fps {f}"));
        }
        for (k, v) in &self.options {
            parts.push(format!("{k}={v}"));
        }
        if parts.is_empty() {
            "the package's defaults".into()
        } else {
            parts.join(", ")
        }
    }
}

/// The facts of a source record that identify the file (its path may be spelt otherwise).
const IDENTITY: [&str; 5] = ["size_bytes", "frames", "width", "height", "duration_s"];

fn identity_text(record: &Value) -> String {
    format!(
        "{} bytes, {} frames, {}x{}, {} s",
        record["size_bytes"],
        record["frames"],
        record["width"],
        record["height"],
        record["duration_s"]
    )
}

fn indices(v: &Value) -> Option<Vec<usize>> {
    v.as_array()?
        .iter()
        .map(|i| i.as_u64().map(|i| i as usize))
        .collect()
}

impl FollowedRecord {
    /// Reads the record at `path`: a `vidprep parity --out` JSON that compared frames.
    pub fn load(path: &Path) -> Result<FollowedRecord> {
        let bad = |message: String| Error::BadFile {
            path: path.to_path_buf(),
            line: None,
            message,
        };
        let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound {
                path: path.to_path_buf(),
            },
            _ => Error::Read {
                path: path.to_path_buf(),
                source: e,
            },
        })?;
        if meta.len() > MAX_RECORD_BYTES {
            return Err(bad(format!(
                "is {} bytes; a parity record is far smaller (is this the right file?)",
                meta.len()
            )));
        }
        let text = std::fs::read(path).map_err(|e| Error::Read {
            path: path.to_path_buf(),
            source: e,
        })?;
        let v: Value = serde_json::from_slice(&text).map_err(|e| {
            bad(format!(
                "is not JSON ({e}); `follow_package` takes the record `vidprep parity SRC \
                 --profile P --out RECORD.json` writes"
            ))
        })?;
        // `vidprep parity --loader`'s record: what a server's loader shows of a sent file,
        // which says whether to send the file or the frames, not which frames to follow.
        if let Some(loader) = v["loader"].as_str() {
            return Err(bad(format!(
                "is the record of `vidprep parity --loader {loader}` (what a vLLM server's loader \
                 shows of a sent file: its verdict says whether to send the file or the frames, \
                 `--payload vllm`), not of a profile's check; follow_package takes the record \
                 `vidprep parity SRC --profile P --out RECORD.json` writes"
            )));
        }
        let not_a_record = |what: &str| {
            bad(format!(
                "is not a vidprep parity record ({what}); follow_package takes the record \
                 `vidprep parity SRC --profile P --out RECORD.json` writes (a record from before \
                 vidprep recorded the request and the source: run vidprep parity again)"
            ))
        };
        // The fields following needs, named when missing (a record from before vidprep
        // recorded them), before the record is read as its type.
        if !v["source"].is_string() {
            return Err(not_a_record("no \"source\""));
        }
        if !v["profile"]["profile"].is_string() {
            return Err(not_a_record("no \"profile\""));
        }
        if !v["vidprep_source"].is_object() {
            return Err(not_a_record("no \"vidprep_source\""));
        }
        if !v["request"].is_object() {
            return Err(not_a_record("no \"request\""));
        }
        match &v["request"]["profile_options"] {
            Value::Null => {}
            Value::Object(m) => {
                if m.values().any(|x| !x.is_number()) {
                    return Err(not_a_record("a profile option that is not a number"));
                }
            }
            _ => return Err(not_a_record("\"request.profile_options\" is not an object")),
        }
        if let Some(positions) = v["reference"]["positions"].as_array() {
            for (p, pos) in positions.iter().enumerate() {
                if pos["position"].as_u64() != Some(p as u64) {
                    return Err(bad(format!(
                        "reference.positions[{p}] is not position {p}: the positions are \
                         not the record's own"
                    )));
                }
            }
        }
        let record: crate::records::ParityRecord = serde_json::from_value(v).map_err(|e| {
            not_a_record(&format!(
                "{e}; `vidprep schema parity` gives the record's JSON Schema"
            ))
        })?;
        let source = record.source.display().to_string();
        let profile = record.profile.as_ref().map_or_else(String::new, |p| {
            p["profile"].as_str().unwrap_or_default().to_string()
        });
        let source_record = record.vidprep_source.clone().unwrap_or_default();
        let request = Request {
            count: record.request.count,
            fps: record.request.fps,
            options: record.request.profile_options.clone(),
        };
        let package = format!(
            "{} {} ({})",
            record.package["package"].as_str().unwrap_or("?"),
            record.package["version"].as_str().unwrap_or("?"),
            record.package["backend"].as_str().unwrap_or("?")
        );
        let (vidprep_names, package_names, package_shows, found_by) =
            if let Some(reference) = &record.reference {
                let mut ours = Vec::with_capacity(reference.positions.len());
                let mut names = Vec::with_capacity(reference.positions.len());
                let mut shows = Vec::with_capacity(reference.positions.len());
                for (p, pos) in reference.positions.iter().enumerate() {
                    match (pos.vidprep_names, pos.package_names) {
                        (Some(a), Some(b)) => {
                            ours.push(a);
                            names.push(b);
                        }
                        _ => {
                            return Err(not_a_record(&format!(
                                "reference.positions[{p}] names no frame"
                            )))
                        }
                    }
                    shows.push(pos.package_shows);
                }
                (ours, names, shows, "reference")
            } else if record.bit_exact {
                // The package's pixels are vidprep's: it showed the frames vidprep names.
                let ours = (!record.frames.is_empty())
                    .then(|| {
                        record
                            .frames
                            .iter()
                            .map(|f| f.index.map(|i| i as usize))
                            .collect::<Option<Vec<_>>>()
                    })
                    .flatten()
                    .ok_or_else(|| not_a_record("no frames compared"))?;
                let names = indices(&record.package["indices"]).unwrap_or_else(|| ours.clone());
                let shows = ours.iter().map(|&i| Some(i)).collect();
                (ours, names, shows, "bit-exact")
            } else {
                return Err(bad(format!(
                    "compares no frames against the plain sequential decode (sizes equal: {}, \
                     bit-exact: {}), so it does not say which frame the package showed; a \
                     record to follow is one of a check whose sizes agree",
                    record.sizes_equal, record.bit_exact
                )));
            };
        Ok(FollowedRecord {
            path: path.to_path_buf(),
            source,
            source_record,
            profile,
            request,
            package,
            vidprep_names,
            package_names,
            package_shows,
            found_by,
        })
    }

    /// The frames the package showed, by position, for an export of `source` (as `now`
    /// records it) with `request` whose profile gave `applied`: refused when the record is of
    /// another source, profile or request (naming both), or when a picture of the package
    /// matched no frame.
    pub fn shown(
        &self,
        source: &Path,
        now: &SourceRecord,
        request: &Request,
        applied: &Applied,
    ) -> Result<Vec<usize>> {
        let record = self.path.display();
        let now_json = serde_json::to_value(now).expect("a source record serialises");
        let same_source = IDENTITY.iter().all(|k| {
            let (a, b) = (&self.source_record[*k], &now_json[*k]);
            match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                _ => a == b,
            }
        });
        if !same_source {
            return Err(Error::Usage(format!(
                "`follow_package`: the parity record {record} is of {} ({}), not of this export's \
                 source {} ({}); run vidprep parity on this source",
                self.source,
                identity_text(&self.source_record),
                source.display(),
                identity_text(&now_json)
            )));
        }
        if self.profile != applied.profile {
            return Err(Error::Usage(format!(
                "`follow_package`: the parity record {record} checks profile {}, this export asks \
                 profile {}; give a record of profile {} (vidprep parity {} --profile {} --out \
                 RECORD.json)",
                self.profile,
                applied.profile,
                applied.profile,
                source.display(),
                applied.profile
            )));
        }
        if self.request != *request {
            return Err(Error::Usage(format!(
                "`follow_package`: the parity record {record} was made with {}, this export asks \
                 {}; the package's frames depend on them: run vidprep parity with this export's \
                 count, fps and profile options",
                self.request.text(),
                request.text()
            )));
        }
        if self.vidprep_names != applied.indices {
            return Err(Error::Usage(format!(
                "`follow_package`: the parity record {record} names other frames for profile {} \
                 than it picks now ({} positions there, {} here): it is of another vidprep or \
                 another version of the source; run vidprep parity again",
                applied.profile,
                self.vidprep_names.len(),
                applied.indices.len()
            )));
        }
        self.package_shows
            .iter()
            .enumerate()
            .map(|(p, shows)| {
                shows.ok_or_else(|| {
                    Error::request(
                        source,
                        format!(
                            "`follow_package`: at position {p} the package's picture (for the \
                             index {} it names) matched none of the frames vidprep parity looked \
                             at (the record {record}: reference.positions[{p}].package_shows is \
                             null), so there is no frame to follow there",
                            self.package_names[p]
                        ),
                    )
                })
            })
            .collect()
    }

    /// The record's part of `frames.json`: which record, what the package named and showed.
    pub fn json(&self, shown: &[usize]) -> Value {
        let differ = self
            .package_names
            .iter()
            .zip(shown)
            .filter(|(a, b)| a != b)
            .count();
        serde_json::json!({
            "record": self.path,
            "package": self.package,
            "found_by": self.found_by,
            "rule": "each position shows the frame the package showed there (vidprep parity's \
                     match of the package's picture against a plain sequential FFmpeg decode), \
                     in place of the frame the profile names",
            "positions_differing": differ,
            "package_names": self.package_names,
            "package_shows": shown,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(dir: &Path, v: &Value) -> PathBuf {
        let p = dir.join("parity.json");
        std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
        p
    }

    fn good() -> Value {
        serde_json::json!({
            "source": "a.avi",
            "profile": {"profile": "qwen2.5-vl"},
            "package": {"package": "qwen-vl-utils", "version": "0.0.14", "backend": "torchcodec", "indices": [0, 5]},
            "request": {"count": null, "fps": null, "profile_options": {}},
            "vidprep_source": {"size_bytes": 10, "frames": 6, "width": 64, "height": 48, "duration_s": 0.24},
            "bit_exact": false,
            "sizes_equal": true,
            "reference": {"positions": [
                {"position": 0, "vidprep_names": 0, "package_names": 0, "package_shows": 0},
                {"position": 1, "vidprep_names": 5, "package_names": 5, "package_shows": 4}
            ]}
        })
    }

    /// The typed record as `vidprep parity --out` writes it reads back, field for field, and
    /// following takes what it says the package showed.
    #[test]
    fn the_typed_record_round_trips_and_is_followed() {
        use crate::records::{
            FrameComparison, ParityRecord, ParityRequest, ParitySeconds, PositionCheck,
            ReferenceCheck,
        };
        let position = |p: usize, named: usize, shows: Option<usize>| PositionCheck {
            position: p,
            vidprep_names: Some(named),
            vidprep_shows: Some(named),
            vidprep_psnr_db: Some(48.5),
            package_names: Some(named),
            package_shows: shows,
            package_psnr_db: Some(31.25),
        };
        let written = ParityRecord {
            vidprep_version: "0.1.0".into(),
            source: "a.avi".into(),
            vidprep_source: Some(good()["vidprep_source"].clone()),
            request: ParityRequest {
                count: Some(2),
                fps: None,
                profile_options: [("max_pixels".to_string(), 50176.0)].into(),
            },
            profile: Some(serde_json::json!({"profile": "qwen2.5-vl", "timestamps": null})),
            package: good()["package"].clone(),
            python: "python3".into(),
            indices_equal: Some(true),
            sizes_equal: true,
            vidprep_shape: [2, 48, 64, 3],
            timestamps_equal: None,
            tokens_equal: Some(true),
            bit_exact: false,
            min_psnr_db: Some(21.0),
            psnr_threshold_db: 40.0,
            frames: vec![FrameComparison {
                position: 0,
                index: Some(0),
                psnr_db: None,
                max_abs_diff: 0,
                differing_values: 0,
            }],
            reference: Some(ReferenceCheck {
                decode: "plain sequential FFmpeg decode".into(),
                vidprep: "right".into(),
                package: "wrong".into(),
                summary: "the package is wrong".into(),
                positions: vec![position(0, 0, Some(0)), position(1, 5, None)],
            }),
            seconds: ParitySeconds {
                vidprep: 0.5,
                package_process: 2.0,
                package_call: Some(1.5),
            },
            pass: false,
        };
        let text = serde_json::to_string_pretty(&written).unwrap();
        let read: ParityRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(read, written);
        assert_eq!(serde_json::to_string_pretty(&read).unwrap(), text);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("parity.json");
        std::fs::write(&path, &text).unwrap();
        let followed = FollowedRecord::load(&path).unwrap();
        assert_eq!(followed.package_shows, [Some(0), None]);
        assert_eq!(followed.found_by, "reference");
        assert_eq!(followed.package, "qwen-vl-utils 0.0.14 (torchcodec)");
        assert_eq!(
            followed.request.options.get("max_pixels").copied(),
            Some(50176.0)
        );
    }

    #[test]
    fn a_record_reads_and_refuses_what_it_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let r = FollowedRecord::load(&record(dir.path(), &good())).unwrap();
        assert_eq!(r.package_shows, [Some(0), Some(4)]);
        assert_eq!(r.package, "qwen-vl-utils 0.0.14 (torchcodec)");
        assert_eq!(r.found_by, "reference");
        let mut old = good();
        old.as_object_mut().unwrap().remove("request");
        let e = FollowedRecord::load(&record(dir.path(), &old)).unwrap_err();
        assert!(e.to_string().contains("run vidprep parity again"), "{e}");
        let mut none = good();
        none["reference"] = Value::Null;
        let e = FollowedRecord::load(&record(dir.path(), &none)).unwrap_err();
        assert!(e.to_string().contains("compares no frames"), "{e}");
        // A loader check's record (it has a source and a request too) is named as such.
        let loader = serde_json::json!({"loader": "vllm-opencv", "source": "a.avi",
            "request": {"num_frames": 8}, "verdict": "send the file"});
        let e = FollowedRecord::load(&record(dir.path(), &loader)).unwrap_err();
        assert!(
            e.to_string()
                .contains("`vidprep parity --loader vllm-opencv`"),
            "{e}"
        );
        std::fs::write(dir.path().join("x.json"), "not json").unwrap();
        let e = FollowedRecord::load(&dir.path().join("x.json")).unwrap_err();
        assert!(e.to_string().contains("is not JSON"), "{e}");
        assert!(matches!(
            FollowedRecord::load(&dir.path().join("missing.json")),
            Err(Error::NotFound { .. })
        ));
    }

    #[test]
    fn requests_read_as_the_export_asks_them() {
        let a = Request {
            count: None,
            fps: Some(2.0),
            options: [("min_pixels".to_string(), 50176.0)].into(),
        };
        assert_eq!(a.text(), "fps 2, min_pixels=50176");
        let none = Request {
            count: None,
            fps: None,
            options: BTreeMap::new(),
        };
        assert_eq!(none.text(), "the package's defaults");
        assert_ne!(a, none);
    }
}
