//! The stages, as a list: one row a stage, in the order they decide, each
//! naming the stage as it stands for a request's kind and how it is made
//! for a request (`None`: the stage has nothing to do with requests of
//! this kind or route). A new stage is its folder and one row here.
//!
//! The rows become two enums, the stages before and after their `needs`,
//! whose methods hand each call to the stage's own: the decision loops
//! over the list without a call through a function table, which a fresh
//! instance pays for on the first call through each entry.

use super::route::Route;
use crate::error::Error;
use crate::explain::ExplanationPart;
use crate::request::plan::Plan;
use crate::request::reads::{Need, Reads};
use crate::request::{AdmissionRequest, GroupVersionKind};
use crate::settings::Settings;
use crate::stage::{Declared, Stage, StageForKind, StageReport};
use crate::{capi, tags};

/// The list's rows become [`ForKind`], [`Needing`] and [`stages`].
macro_rules! stage_list {
    ($($name:ident: $for_kind:ty = |$kind:ident, $route:ident, $settings:ident| $make:expr;)*) => {
        /// The rows, in the list's order: a stage's place in the list, where
        /// its part of an explanation goes.
        #[derive(Clone, Copy)]
        enum Row {
            $($name,)*
        }

        /// A stage as it stands for a request's kind under the settings.
        pub(crate) enum ForKind<'r> {
            $($name($for_kind),)*
        }

        /// A stage from its `needs` on.
        // One a stage per request, moved once into its decision: boxing the
        // large variant would only add an allocation to every request.
        #[allow(clippy::large_enum_variant)]
        pub(crate) enum Needing<'r> {
            $($name(<$for_kind as StageForKind<'r>>::Stage),)*
        }

        /// The stages for a request of `kind` on `route`, in the order they
        /// decide; none for a request the policy does not act on.
        pub(crate) fn stages<'r>(
            kind: &GroupVersionKind,
            route: Route,
            settings: &'r Settings,
        ) -> Vec<ForKind<'r>> {
            let mut stages = Vec::new();
            if route == Route::NotActedOn {
                return stages;
            }
            $(
                let make = |$kind: &GroupVersionKind, $route: Route, $settings: &'r Settings| $make;
                if let Some(stage) = make(kind, route, settings) {
                    stages.push(ForKind::$name(stage));
                }
            )*
            stages
        }

        /// Each stage's empty part of an explanation, in the list's order:
        /// a stage that does not run keeps it.
        // The rows name their stages' types with `'r`, which only the
        // body uses.
        #[allow(clippy::extra_unused_lifetimes)]
        pub(crate) fn unexplained<'r>() -> Vec<Box<dyn ExplanationPart>> {
            vec![$(Box::new(<<$for_kind as StageForKind<'r>>::Explained>::default()),)*]
        }

        impl<'r> ForKind<'r> {
            /// [`StageForKind::reads`].
            pub(crate) fn reads<'a>(&'a self, reads: &mut Declared<'a>) {
                match self {
                    $(ForKind::$name(stage) => stage.reads(reads),)*
                }
            }

            /// [`StageForKind::needs`].
            pub(crate) fn needs(
                &self,
                request: &'r AdmissionRequest,
            ) -> Result<Option<Needing<'r>>, Error> {
                Ok(match self {
                    $(ForKind::$name(stage) => stage.needs(request)?.map(Needing::$name),)*
                })
            }
        }

        impl<'r> Needing<'r> {
            /// The stage's place in the list.
            pub(crate) fn at(&self) -> usize {
                match self {
                    $(Needing::$name(_) => Row::$name as usize,)*
                }
            }

            /// [`Stage::first`].
            pub(crate) fn first(&self) -> Option<Need<'_>> {
                match self {
                    $(Needing::$name(stage) => stage.first(),)*
                }
            }

            /// [`Stage::then`].
            pub(crate) fn then(&mut self, reads: &Reads) -> Option<Need<'_>> {
                match self {
                    $(Needing::$name(stage) => stage.then(reads),)*
                }
            }

            /// [`Stage::decide`].
            pub(crate) fn decide(
                self,
                request: &'r AdmissionRequest,
                reads: &mut Reads,
                plan: &mut Plan,
                traced: bool,
            ) -> StageReport<'r> {
                match self {
                    $(Needing::$name(stage) => stage.decide(request, reads, plan, traced),)*
                }
            }
        }
    };
}

stage_list! {
    Capi: capi::CapiForKind<'r> = |_kind, route, settings| route.capi().map(|child| capi::for_kind(child, &settings.capi));
    Tags: tags::stage_door::TagsForKind<'r> = |kind, _route, settings| Some(tags::stage_door::for_kind(kind, &settings.tags));
}
