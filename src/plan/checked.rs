//! Proof that a plan was checked ([`CheckedPlan`]) and normalised ([`NormalPlan`]), so that
//! each is done once per item whichever door the item came in by: a manifest's reader checks
//! its lines (to report bad ones before the run) and the batch runner runs them without
//! checking again; [`crate::execute`], given a bare [`Plan`], checks it itself. Neither type
//! can be built without doing the work it stands for, and neither lets its plan be changed
//! afterwards (only `strict`, which no check looks at).

use super::schema::Plan;
use crate::call::context::CallContext;
use crate::call::tally::Event;
use crate::vocab::EncodeSettings;

/// A plan that passed [`Plan::check`]. Only [`CheckedPlan::new`] makes one; it reads as a
/// [`Plan`] (it derefs to one) and serialises as one.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct CheckedPlan(Plan);

impl CheckedPlan {
    /// Checks `plan` ([`Plan::check`]: the message says what is wrong and what was expected).
    pub fn new(plan: Plan) -> Result<CheckedPlan, String> {
        Self::new_in(plan, &CallContext::new())
    }

    /// Checks `plan` (as [`CheckedPlan::new`]), counting the check on the call's tally.
    pub(crate) fn new_in(plan: Plan, ctx: &CallContext) -> Result<CheckedPlan, String> {
        ctx.count(Event::PlanCheck);
        plan.check()?;
        Ok(CheckedPlan(plan))
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.0
    }

    /// The plan, no longer known to be checked.
    pub fn into_plan(self) -> Plan {
        self.0
    }

    /// Refuses damaged sources (`"strict"`), or not; no check depends on it.
    pub fn set_strict(&mut self, strict: bool) {
        self.0.strict = strict;
    }

    /// Changes the plan's paths with `change` (`crate::batch::manifest` takes relative paths from a
    /// manifest's folder) and checks them again (UTF-8), the only part of the check that
    /// joining them to a folder can change. `change` must touch nothing but paths.
    pub(crate) fn change_paths(&mut self, change: impl FnOnce(&mut Plan)) -> Result<(), String> {
        change(&mut self.0);
        self.0.check_paths()
    }

    /// The plan in its canonical form ([`Plan::normalized`]) with `defaults`, counted on the
    /// call's tally.
    pub(crate) fn normal(&self, defaults: &EncodeSettings, ctx: &CallContext) -> NormalPlan {
        ctx.count(Event::Normalise);
        NormalPlan(self.0.normalized(defaults))
    }
}

impl std::ops::Deref for CheckedPlan {
    type Target = Plan;

    fn deref(&self) -> &Plan {
        &self.0
    }
}

impl AsRef<Plan> for CheckedPlan {
    fn as_ref(&self) -> &Plan {
        &self.0
    }
}

/// A checked plan in its canonical form, as the executor runs it, sidecars record it and
/// `--resume` hashes it: only [`CheckedPlan::normal`] makes one.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NormalPlan(Plan);

impl std::ops::Deref for NormalPlan {
    type Target = Plan;

    fn deref(&self) -> &Plan {
        &self.0
    }
}
