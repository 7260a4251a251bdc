//! Sparse reading: a [`FrameSource`] that yields only the frames at chosen indices, seeking to
//! the keyframe before each group of targets and decoding forward, on several threads at once
//! (each with its own decoder), skipping the non-reference frames nobody asked for. Frames
//! come out in completion order; each carries its source index.

use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::call::context::CallContext;
use crate::error::{Error, Result};
use crate::frames::pipeline::{FrameOrigin, FrameSource, Geometry, PipelineFrame};
use crate::media::decode::{DecodeOptions, FrameReader};
use crate::media::source::Source;
use crate::media::table::{FrameTable, UsedInput};

/// Targets that share a keyframe are decoded in one forward run.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Group {
    keyframe: usize,
    targets: Vec<usize>,
}

impl Group {
    /// Frames decoded to reach every target of the group.
    fn cost(&self) -> usize {
        self.targets.last().map_or(0, |&t| t + 1 - self.keyframe)
    }
}

/// Splits sorted, unique `targets` into GOP groups and deals them to `workers` so that each
/// worker decodes about as many frames (longest groups first, each to the least loaded
/// worker). Each worker's groups are in index order.
fn plan(table: &FrameTable, targets: &[usize], workers: usize) -> Vec<Vec<Group>> {
    let mut groups: Vec<Group> = Vec::new();
    for &t in targets {
        let k = table.clean_keyframe_at_or_before(t);
        match groups.last_mut() {
            Some(g) if g.keyframe == k => g.targets.push(t),
            _ => groups.push(Group {
                keyframe: k,
                targets: vec![t],
            }),
        }
    }
    let workers = workers.clamp(1, groups.len().max(1));
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&g| std::cmp::Reverse(groups[g].cost()));
    let mut load = vec![0usize; workers];
    let mut assigned: Vec<Vec<usize>> = vec![Vec::new(); workers];
    for g in order {
        let w = (0..workers)
            .min_by_key(|&w| load[w])
            .expect("at least one worker");
        load[w] += groups[g].cost();
        assigned[w].push(g);
    }
    assigned
        .into_iter()
        .map(|mut gs| {
            gs.sort_unstable();
            gs.into_iter().map(|g| groups[g].clone()).collect()
        })
        .filter(|gs: &Vec<Group>| !gs.is_empty())
        .collect()
}

/// The frames at a set of indices of one video.
pub struct SparseSource {
    rx: Option<Receiver<Result<PipelineFrame>>>,
    workers: Vec<JoinHandle<()>>,
    count: usize,
}

impl SparseSource {
    /// Starts reading `indices` (any order, repeats allowed) of `source` with `workers` threads,
    /// decoding with `options` (`strict`, `upright`; its `threads`, the call's budget with 0
    /// for one per core, are divided among the workers, one each at least). The first worker
    /// decodes from `used` (the input `table` was built from) when given, instead of opening
    /// the source again: with one worker the source is opened once per item. Each worker
    /// reads for the call `ctx` (a clone of it moves into the worker's thread).
    pub(crate) fn start_with(
        source: &Source,
        table: Arc<FrameTable>,
        indices: &[usize],
        workers: usize,
        options: DecodeOptions,
        mut used: Option<UsedInput>,
        ctx: &CallContext,
    ) -> Result<SparseSource> {
        let path = source.path();
        let mut targets: Vec<usize> = indices.to_vec();
        targets.sort_unstable();
        targets.dedup();
        if let Some(&bad) = targets.iter().find(|&&i| i >= table.len()) {
            return Err(Error::request(
                path,
                format!(
                    "frame {bad} is past the end of the video ({} frames)",
                    table.len()
                ),
            ));
        }
        // Frames known only by counting are read by one worker from the start.
        let workers = if table.identity == crate::media::table::Identity::Sequential
            || !table.damage.is_empty()
        {
            1
        } else {
            workers
        };
        let plans = plan(&table, &targets, workers);
        // A damaged stream decodes as ffmpeg does (its default threads): concealment
        // depends on them.
        let threads_each = if table.damage.is_empty() {
            (crate::call::host::worker_count(options.threads) / plans.len().max(1)).max(1)
        } else {
            0
        };
        let (tx, rx) = sync_channel::<Result<PipelineFrame>>(2 * plans.len().max(1));
        let mut handles = Vec::new();
        for groups in plans {
            let tx = tx.clone();
            let source = source.clone();
            let path: PathBuf = source.path().to_path_buf();
            let table = table.clone();
            let options = options.clone();
            let ctx = ctx.clone();
            let used = used.take();
            handles.push(std::thread::spawn(move || {
                let result = (|| -> Result<()> {
                    let options = DecodeOptions {
                        threads: threads_each,
                        ..options
                    };
                    let mut reader = match used {
                        Some(used) => FrameReader::from_used_input(used, options, table.clone())?,
                        None => {
                            FrameReader::open_with_table_in(&source, options, table.clone(), &ctx)?
                        }
                    };
                    let wanted: Vec<usize> = groups
                        .iter()
                        .flat_map(|g| g.targets.iter().copied())
                        .collect();
                    reader.want_only(&wanted);
                    for group in &groups {
                        for &t in &group.targets {
                            reader.seek_to_index(t)?;
                            let frame = reader.next_frame()?.ok_or_else(|| {
                                Error::corrupt(
                                    &path,
                                    format!("at frame {t}"),
                                    "the video ended before this frame",
                                )
                            })?;
                            if frame.index != t {
                                return Err(Error::corrupt(
                                    &path,
                                    format!("at frame {t}"),
                                    format!("decoded frame {} instead", frame.index),
                                ));
                            }
                            let out = PipelineFrame {
                                duration: table.duration_of(t),
                                time: frame.time,
                                origin: FrameOrigin {
                                    source: 0,
                                    index: t,
                                    pts: frame.pts,
                                },
                                image: frame.image,
                                index: t,
                                geometry: Geometry::IDENTITY,
                                damaged: frame.damaged,
                                rgb: frame.rgb,
                            };
                            if tx.send(Ok(out)).is_err() {
                                return Ok(());
                            }
                        }
                    }
                    Ok(())
                })();
                if let Err(e) = result {
                    let _ = tx.send(Err(e));
                }
            }));
        }
        Ok(SparseSource {
            rx: Some(rx),
            workers: handles,
            count: targets.len(),
        })
    }
}

impl FrameSource for SparseSource {
    fn next_frame(&mut self) -> Result<Option<PipelineFrame>> {
        match self.rx.as_ref().map(|rx| rx.recv()) {
            Some(Ok(item)) => item.map(Some),
            _ => Ok(None),
        }
    }

    fn len_hint(&self) -> Option<usize> {
        Some(self.count)
    }
}

impl Drop for SparseSource {
    fn drop(&mut self) {
        // Closing the channel stops the workers at their next frame.
        self.rx.take();
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::table::FrameEntry;
    use crate::vocab::Ratio;

    #[test]
    fn groups_follow_gops_and_balance_work() {
        let entries = (0..100)
            .map(|i| FrameEntry {
                pts: i,
                dts: Some(i),
                duration: 1,
                key: i % 25 == 0,
                pos: -1,
            })
            .collect();
        let table = FrameTable::from_entries(Ratio::new(1, 25), entries, 0, None, None);
        let plans = plan(&table, &[3, 10, 30, 60, 99], 2);
        let all: Vec<usize> = {
            let mut v: Vec<usize> = plans
                .iter()
                .flatten()
                .flat_map(|g| g.targets.clone())
                .collect();
            v.sort_unstable();
            v
        };
        assert_eq!(all, vec![3, 10, 30, 60, 99]);
        // 3 and 10 share the keyframe 0.
        assert!(plans
            .iter()
            .flatten()
            .any(|g| g.keyframe == 0 && g.targets == vec![3, 10]));
        let loads: Vec<usize> = plans
            .iter()
            .map(|gs| gs.iter().map(Group::cost).sum())
            .collect();
        assert_eq!(loads.len(), 2);
        assert!(
            loads.iter().max().unwrap() - loads.iter().min().unwrap() <= 25,
            "{loads:?}"
        );
    }
}
