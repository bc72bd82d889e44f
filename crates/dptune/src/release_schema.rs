//! The release schema: for every command, each field its JSON may contain and why it may be
//! released (DESIGN.md, "`Report`"; rule 4 of "Rules that make it trustworthy").
//!
//! A field is one of three things ([`Class`]):
//!
//! * **public input**: an argument, a constant, or a value computed from public inputs alone
//!   (for example an ε computed from the budget and public sizes);
//! * **private release**: computed from private data by a mechanism whose charge is part of the
//!   printed guarantee (the charge is named), or post-processing of such a release with public
//!   data;
//! * **NOT PRIVATE diagnostic**: computed from private data with no charge. It may appear only
//!   when the user asked for it with an explicit flag, and only inside a JSON object (or below
//!   one) that carries `"not_private": true`.
//!
//! Anything else (a timer, an exact private count, a field nobody declared) is a leak until
//! someone declares it here, which makes the decision explicit and reviewable in one place.
//! [`CommandSchema::check`] takes the fields a front end emitted (as dotted paths, see
//! [`Seen`]) and returns every violation; the CLI's `tests/release_schema.rs` runs each
//! command and walks its JSON through it.
//!
//! **Paths.** Object keys are joined by `.`; an array element adds `[]` to its key
//! (`cells[].method`, `noisy_counts[]`). In a declared path, `*` matches any one key (for maps
//! keyed by data, such as hyperparameter names) and `**` any number of keys (for nested
//! library types such as a serialised `Guarantee`, or a name allowed at any depth).

use std::fmt;

/// Why a field may be released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// An argument, a constant, or a function of public inputs only.
    PublicInput,
    /// Computed from private data and paid for: `charge` names the part of the printed
    /// guarantee that covers it.
    PrivateRelease {
        /// Which charge covers this field.
        charge: &'static str,
    },
    /// Computed from private data and **not** covered by any guarantee: shown only under
    /// `flag`, inside an object labelled `"not_private": true`.
    NotPrivateDiagnostic {
        /// The command-line flag that asks for it.
        flag: &'static str,
    },
}

/// One declared field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The dotted path pattern (see the module docs).
    pub path: &'static str,
    /// Why it may be released.
    pub class: Class,
}

/// Every field one command may release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSchema {
    /// The command as typed, e.g. `"federated simulate"`.
    pub command: &'static str,
    /// Its fields.
    pub fields: &'static [Field],
    /// A prefix under which every field may also appear (one object per repetition, e.g.
    /// `runs[]`), or `""`.
    pub repeated_under: &'static str,
}

/// A field as a front end emitted it: its concrete path (array elements as `[]`) and whether
/// it sits in or below an object carrying `"not_private": true`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen<'a> {
    /// The concrete dotted path.
    pub path: &'a str,
    /// Whether an enclosing object is labelled `"not_private": true`.
    pub labelled: bool,
}

/// What is wrong with one emitted field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// No declaration covers the field: it is a leak until it is declared.
    Undeclared {
        /// The emitted path.
        path: String,
    },
    /// A NOT PRIVATE diagnostic appeared although its flag was not given.
    DiagnosticWithoutFlag {
        /// The emitted path.
        path: String,
        /// The flag that must be given.
        flag: &'static str,
    },
    /// A NOT PRIVATE diagnostic appeared outside any object labelled `"not_private": true`.
    DiagnosticUnlabelled {
        /// The emitted path.
        path: String,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::Undeclared { path } => write!(
                f,
                "`{path}` is not declared in the release schema (a leak until declared)"
            ),
            Violation::DiagnosticWithoutFlag { path, flag } => {
                write!(f, "NOT PRIVATE `{path}` released without `{flag}`")
            }
            Violation::DiagnosticUnlabelled { path } => write!(
                f,
                "NOT PRIVATE `{path}` is not inside an object labelled \"not_private\": true"
            ),
        }
    }
}

/// Whether the concrete `path` matches the declared `pattern`.
fn matches(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern.split('.').collect();
    let got: Vec<&str> = path.split('.').collect();
    matches_segments(&pat, &got)
}

/// Segment-wise match: `**` takes zero or more segments, `*` (or `*[]`) any one key (with the
/// same array suffix), anything else itself.
fn matches_segments(pat: &[&str], got: &[&str]) -> bool {
    match (pat.split_first(), got.split_first()) {
        (None, None) => true,
        (Some((&"**", rest)), _) => {
            matches_segments(rest, got) || (!got.is_empty() && matches_segments(pat, &got[1..]))
        }
        (Some((p, pat_rest)), Some((g, got_rest))) => {
            let ok = match p.strip_prefix('*') {
                Some(suffix) => {
                    let key = g.trim_end_matches("[]");
                    !key.is_empty() && &g[key.len()..] == suffix
                }
                None => p == g,
            };
            ok && matches_segments(pat_rest, got_rest)
        }
        _ => false,
    }
}

impl CommandSchema {
    /// The declaration covering `path` (first match), if any.
    pub fn classify(&self, path: &str) -> Option<&'static Field> {
        let inner = if self.repeated_under.is_empty() {
            None
        } else {
            path.strip_prefix(self.repeated_under)
                .and_then(|p| p.strip_prefix('.'))
        };
        self.fields
            .iter()
            .find(|f| matches(f.path, path) || inner.is_some_and(|p| matches(f.path, p)))
    }

    /// Every violation among the emitted fields, given the flags the command was run with.
    pub fn check<'a>(
        &self,
        seen: impl IntoIterator<Item = Seen<'a>>,
        flags: &[&str],
    ) -> Vec<Violation> {
        let mut out = Vec::new();
        for s in seen {
            let path = s.path.to_string();
            match self.classify(s.path).map(|f| f.class) {
                None => out.push(Violation::Undeclared { path }),
                Some(Class::NotPrivateDiagnostic { flag }) => {
                    if !flags.contains(&flag) {
                        out.push(Violation::DiagnosticWithoutFlag {
                            path: path.clone(),
                            flag,
                        });
                    }
                    if !s.labelled {
                        out.push(Violation::DiagnosticUnlabelled { path });
                    }
                }
                Some(_) => {}
            }
        }
        out
    }
}

/// The schema of `command` (e.g. `"tune"`, `"account dpsgd"`, `"federated simulate"`).
pub fn schema(command: &str) -> Option<&'static CommandSchema> {
    COMMANDS.iter().find(|c| c.command == command)
}

use Class::{NotPrivateDiagnostic as Diag, PrivateRelease as Private, PublicInput as Public};

const fn public(path: &'static str) -> Field {
    Field {
        path,
        class: Public,
    }
}

const fn private(path: &'static str, charge: &'static str) -> Field {
    Field {
        path,
        class: Private { charge },
    }
}

const fn diag(path: &'static str, flag: &'static str) -> Field {
    Field {
        path,
        class: Diag { flag },
    }
}

/// The label an object carries when it (or something below it) holds NOT PRIVATE diagnostics.
const LABELS: [Field; 2] = [public("**.not_private"), public("**.label")];

/// Every command's release. Account and study compute from public inputs only (the study's
/// table is the analyst's research input and no guarantee is claimed for it).
pub static COMMANDS: &[CommandSchema] = &[
    CommandSchema {
        command: "tune",
        repeated_under: "",
        fields: &[
            public("dataset"),
            public("learner"),
            public("learner.*.*"),
            public("tuner"),
            // Whether the noise came from a caller's seed: a seeded run is NOT PRIVATE (the
            // noise is predictable from the seed) and says so.
            public("seeded"),
            private("best.*", "privacy.tuning (the selected configuration)"),
            public("privacy.epsilon"),
            public("privacy.delta"),
            public("privacy.neighbours"),
            public("privacy.tuning.epsilon"),
            public("privacy.tuning.delta"),
            public("privacy.final_fit.epsilon"),
            public("privacy.final_fit.delta"),
            public("privacy.tuning.route"),
            public("privacy.tuning.theorem"),
            private(
                "privacy.final_fit.route",
                "privacy.tuning (the route of the selected configuration's schedule, planned \
                 with the noisy count: post-processing of both releases)",
            ),
            private(
                "privacy.final_fit.noise_multiplier",
                "privacy.tuning (calibrated for the selected configuration and the planned \
                 size: post-processing of both releases)",
            ),
            private(
                "privacy.per_run",
                "privacy.record_count (calibrated to the planned size: post-processing of the \
                 noisy count; a public input with --public-size)",
            ),
            public("privacy.record_count.epsilon"),
            public("privacy.record_count.delta"),
            public("cap"),
            public("size.source"),
            public("size.records"),
            private(
                "size.value",
                "privacy.record_count (the noisy record count)",
            ),
            public("size.epsilon"),
            public("size.label"),
            public("timing"),
            public("public_test_records"),
            private(
                "test_accuracy",
                "privacy.final_fit (the final model, scored on the public test split)",
            ),
            private(
                "test_rmse",
                "privacy.final_fit (the final model, scored on the public test split)",
            ),
            public("compare.not_private"),
            public("compare.label"),
            diag("compare.best.*", "--compare"),
            diag("compare.test_accuracy", "--compare"),
            diag("compare.test_rmse", "--compare"),
        ],
    },
    CommandSchema {
        command: "select",
        repeated_under: "",
        fields: &[
            public("mechanism"),
            public("repeat"),
            // Whether the noise came from a caller's seed: a seeded run is NOT PRIVATE (the
            // noise is predictable from the seed) and says so.
            public("seeded"),
            private("index", "spent"),
            private("indices[]", "spent"),
            private("counts[]", "spent (repeat selections)"),
            private("counts.*", "spent (repeat top-k selections)"),
            public("spent.epsilon"),
            public("spent.delta"),
            public("spent.rho"),
            public("spent.neighbours"),
            LABELS[0],
            diag("probabilities[]", "--probabilities"),
        ],
    },
    CommandSchema {
        command: "gp",
        repeated_under: "",
        fields: &[
            private("lengthscale", "privacy.eps_select"),
            private("selection.index", "privacy.eps_select"),
            public("selection.grid[]"),
            public("selection.utility"),
            public("selection.sensitivity"),
            public("selection.folds"),
            public("privacy.epsilon"),
            public("privacy.delta"),
            public("privacy.eps_select"),
            public("privacy.eps_predict"),
            public("privacy.neighbours"),
            public("privacy.guarantee.**"),
            // Replace-one: the sizes are public; the inputs x are public in the cloaking
            // model (only the outputs y are private), so the noise scales are too.
            public("predictions.n_test"),
            public("predictions.n_plot_grid"),
            public("predictions.sigma"),
            public("predictions.classic_sigma_c_delta"),
            public("predictions.sensitivity"),
            public("predictions.charged_sensitivity"),
            public("predictions.granularity"),
            public("predictions.mean_noise_sd_at_test"),
            // The noise scale at each test input and which rows are test rows: functions of
            // the public inputs and of the data-independent split.
            public("predictions.noise_sd[]"),
            public("predictions.test_rows[]"),
            private(
                "predictions.values[]",
                "privacy.eps_predict (cloaked predictions)",
            ),
            public("data.source"),
            public("data.n_train"),
            public("data.n_test"),
            public("data.y_range[]"),
            public("data.input_scaling"),
            public("seeded"),
            public("plot"),
            LABELS[0],
            LABELS[1],
            diag("**.clipped", "--diagnostics"),
            diag("**.clipped_training_outputs", "--diagnostics"),
            diag("**.clipped_note", "--diagnostics"),
            diag("**.test_rmse", "--diagnostics"),
            diag("**.test_rmse_note", "--diagnostics"),
        ],
    },
    CommandSchema {
        command: "federated simulate",
        repeated_under: "runs[]",
        fields: &[
            public("dataset"),
            public("clients"),
            public("partition"),
            public("k"),
            public("min_survivors"),
            public("dropout_rate"),
            public("data_seed"),
            // The key of the run's noise: the simulation is always a seeded research run, and
            // `seeded`/`research` say so (the charges below hold only against someone who does
            // not know the seed).
            public("seed"),
            public("seeded"),
            public("research"),
            public("local_epochs"),
            public("fedavg_rounds"),
            private(
                "selected",
                "privacy (client-level DP-HYPE vote; research mode: noise keyed by `seed`)",
            ),
            private(
                "selected_hyperparameters.*",
                "privacy (client-level DP-HYPE vote; research mode: noise keyed by `seed`)",
            ),
            private(
                "noisy_counts[]",
                "privacy (distributed Skellam noise; research mode: noise keyed by `seed`)",
            ),
            // The server sees who submitted; dropouts must not depend on data (issue 13 #8).
            public("survivors"),
            public("privacy.epsilon"),
            public("privacy.delta"),
            public("privacy.neighbours"),
            public("privacy.level"),
            public("privacy.noise"),
            public("privacy.noise_variance"),
            public("colluders"),
            public("privacy.colluders"),
            public("privacy.assumption"),
            public("summary.runs"),
            LABELS[0],
            LABELS[1],
            diag("**.baselines_note", "--diagnostics"),
            diag("**.selected_accuracy", "--diagnostics"),
            diag("**.opt_accuracy", "--diagnostics"),
            diag("**.randguess_accuracy", "--diagnostics"),
            diag("**.reference_accuracies[]", "--diagnostics"),
            diag("**.secagg_seconds.*", "--diagnostics"),
            diag("**.selected_accuracy_mean", "--diagnostics"),
            diag("**.fraction_of_the_way", "--diagnostics"),
        ],
    },
    CommandSchema {
        command: "account gaussian",
        repeated_under: "",
        fields: &[
            public("mechanism"),
            public("noise_multiplier"),
            public("sensitivity"),
            public("sigma"),
            public("delta"),
            public("epsilon"),
            public("epsilon_rdp"),
            public("order"),
        ],
    },
    CommandSchema {
        command: "account calibrate-gaussian",
        repeated_under: "",
        fields: &[
            public("mechanism"),
            public("epsilon"),
            public("delta"),
            public("sensitivity"),
            public("sigma"),
            public("sigma_classic"),
            public("sigma_classic_note"),
            public("sigma_classic_valid"),
        ],
    },
    CommandSchema {
        command: "account dpsgd",
        repeated_under: "",
        fields: &[
            public("mechanism"),
            public("sampling_rate"),
            public("noise_multiplier"),
            public("steps"),
            public("delta"),
            public("neighbours"),
            public("epsilon"),
            public("order"),
            public("epsilon_default_grid"),
            public("order_default_grid"),
            public("epsilon_pld"),
            public("epsilon_rdp"),
            public("interval"),
            public("route"),
        ],
    },
    CommandSchema {
        command: "account compose",
        repeated_under: "",
        fields: &[
            public("delta"),
            public("neighbours"),
            public("parts"),
            public("epsilon"),
            public("epsilon_pld"),
            public("epsilon_rdp"),
            public("interval"),
            public("route"),
        ],
    },
    CommandSchema {
        command: "account profile",
        repeated_under: "",
        fields: &[
            public("neighbours"),
            public("interval"),
            public("epsilon[]"),
            public("delta_pld[]"),
            public("delta_closed_form[]"),
            public("plot"),
        ],
    },
    CommandSchema {
        command: "account calibrate-dpsgd",
        repeated_under: "",
        fields: &[
            public("mechanism"),
            public("sampling_rate"),
            public("steps"),
            public("epsilon"),
            public("delta"),
            public("neighbours"),
            public("noise_multiplier"),
            public("epsilon_pld"),
            public("interval"),
            public("grid_limited"),
            public("epsilon_rdp"),
            public("route"),
        ],
    },
    CommandSchema {
        command: "account repeat",
        repeated_under: "",
        fields: &[
            public("base"),
            public("mean_runs"),
            public("eta"),
            public("gamma"),
            public("delta"),
            public("epsilon"),
            public("epsilon_pure"),
            public("epsilon_single_run"),
        ],
    },
    CommandSchema {
        command: "account zcdp",
        repeated_under: "",
        fields: &[
            public("rho"),
            public("delta"),
            public("epsilon"),
            public("order"),
        ],
    },
    CommandSchema {
        command: "study",
        repeated_under: "",
        fields: &[
            public("title"),
            public("configurations"),
            public("goal"),
            public("validation_source"),
            public("test_source"),
            public("best_index"),
            public("best_validation"),
            public("best_test"),
            public("tied_best"),
            public("sensitivity"),
            public("oracle_regret"),
            public("table_mean_regret"),
            public("table_mean_regret_se"),
            public("model.*"),
            public("options.*"),
            public("options.*[]"),
            public("cells[].*"),
            public("plot"),
            // --recommend
            public("method"),
            public("reason"),
            public("ranking[].*"),
        ],
    },
    // The curator's own store: every field echoes what was declared or charged (public), except
    // the time of each charge. A charge is committed as its command starts, so the gaps between
    // charges reveal run times: a NOT PRIVATE curator-side record, shown only on request.
    CommandSchema {
        command: "budget history",
        repeated_under: "",
        fields: &[
            public("name"),
            public("epsilon"),
            public("delta"),
            public("neighbours"),
            public("created"),
            public("store"),
            public("spent.*"),
            public("charges[]"),
            public("charges[].seq"),
            public("charges[].command"),
            public("charges[].label"),
            public("charges[].guarantee.**"),
            public("charges[].description"),
            public("charges[].epsilon"),
            public("charges[].curator.not_private"),
            public("charges[].curator.label"),
            diag("charges[].curator.time", "--times"),
        ],
    },
    // Python result objects (paths are attribute names; `dptune.tune`'s result and the
    // fitted scikit-learn estimator it returns).
    CommandSchema {
        command: "python tune",
        repeated_under: "",
        fields: &[
            private("config.*", "guarantee (the selected configuration)"),
            private("model", "guarantee (the selected candidate's model)"),
            private("score", "guarantee (the selected candidate's noisy score)"),
            public("guarantee"),
            // Inputs, or computed from inputs alone (the calibration, the cap).
            public("per_run"),
            public("target"),
            public("method"),
            public("direction"),
            public("cap"),
            public("noise_multiplier"),
            // Whether the plan's draws came from a caller's seed (NOT PRIVATE when true).
            public("seeded"),
        ],
    },
    CommandSchema {
        command: "python optuna",
        repeated_under: "",
        fields: &[
            private(
                "best_params.*",
                "guarantee (the selected trial's parameters)",
            ),
            private(
                "best_value",
                "guarantee (the selected trial's private score)",
            ),
            private("model", "guarantee (the selected trial's model)"),
            public("guarantee"),
        ],
    },
    CommandSchema {
        command: "python PrivateLogisticRegression",
        repeated_under: "",
        fields: &[
            private("coef_", "guarantee_ (Gaussian output perturbation)"),
            private("intercept_", "guarantee_ (Gaussian output perturbation)"),
            public("classes_"),
            public("guarantee_"),
            // Parameters: declared in advance, or the tuner's (charged) configuration.
            public("classes"),
            private("C", "the tuning's guarantee (a configuration it selected)"),
            public("rho"),
            public("norm_bound"),
            public("fit_intercept"),
            public("intercept_scaling"),
            public("tol"),
            public("feature_bounds"),
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(paths: &[&'static str]) -> Vec<Seen<'static>> {
        paths
            .iter()
            .map(|&path| Seen {
                path,
                labelled: path.starts_with("compare."),
            })
            .collect()
    }

    #[test]
    fn patterns() {
        assert!(matches("best.*", "best.learning_rate"));
        assert!(!matches("best.*", "best"));
        assert!(!matches("best.*", "best.a.b"));
        assert!(matches("options.*[]", "options.epsilons[]"));
        assert!(!matches("options.*", "options.epsilons[]"));
        assert!(!matches("*[]", "[]"));
        assert!(matches(
            "privacy.guarantee.**",
            "privacy.guarantee.bounds[].approx.eps"
        ));
        assert!(!matches("privacy.guarantee.**", "privacy.other"));
        assert!(matches("**.clipped", "data.clipped"));
        assert!(matches("**.not_private", "not_private"));
    }

    #[test]
    fn every_command_is_declared_once() {
        for c in COMMANDS {
            assert_eq!(schema(c.command), Some(c));
            for f in c.fields {
                assert!(!f.path.is_empty(), "{}", c.command);
            }
        }
        for name in ["tune", "select", "gp", "federated simulate", "study"] {
            assert!(schema(name).is_some(), "{name}");
        }
        assert!(
            schema("account").is_none(),
            "account has one schema per subcommand"
        );
    }

    #[test]
    fn a_clean_tune_release_passes() {
        let t = schema("tune").unwrap();
        let fields = seen(&[
            "best.learning_rate",
            "privacy.epsilon",
            "public_test_records",
            "test_accuracy",
        ]);
        assert_eq!(t.check(fields, &[]), vec![]);
        assert_eq!(
            t.classify("best.epochs").unwrap().class,
            Class::PrivateRelease {
                charge: "privacy.tuning (the selected configuration)"
            }
        );
    }

    /// The leaks issue 13 found in `tune` (#2, #3) are rejected: the checker has teeth.
    #[test]
    fn leaky_tune_fields_are_rejected() {
        let t = schema("tune").unwrap();
        let v = t.check(
            seen(&["best.epochs", "wall_time_s", "records.private"]),
            &[],
        );
        assert_eq!(
            v,
            vec![
                Violation::Undeclared {
                    path: "wall_time_s".into()
                },
                Violation::Undeclared {
                    path: "records.private".into()
                },
            ]
        );
        assert!(v[0].to_string().contains("wall_time_s"));
    }

    #[test]
    fn diagnostics_need_their_flag_and_their_label() {
        let t = schema("tune").unwrap();
        let labelled = seen(&["compare.not_private", "compare.test_accuracy"]);
        assert_eq!(t.check(labelled.clone(), &["--compare"]), vec![]);
        assert_eq!(
            t.check(labelled, &[]),
            vec![Violation::DiagnosticWithoutFlag {
                path: "compare.test_accuracy".into(),
                flag: "--compare"
            }]
        );
        let g = schema("gp").unwrap();
        let bare = [Seen {
            path: "test_rmse",
            labelled: false,
        }];
        assert_eq!(
            g.check(bare, &["--diagnostics"]),
            vec![Violation::DiagnosticUnlabelled {
                path: "test_rmse".into()
            }]
        );
    }

    #[test]
    fn repetitions_reuse_the_declarations() {
        let f = schema("federated simulate").unwrap();
        assert!(f.classify("runs[].selected").is_some());
        assert!(f.classify("runs[].noisy_counts[]").is_some());
        assert!(f.classify("runs[].wall_time_s").is_none());
        assert!(f.classify("summary.runs").is_some());
    }

    /// Review item: the simulation released `seed`, the key of its noise, beside `noisy_counts`
    /// labelled a plain charged release. Every release of it is labelled research mode.
    #[test]
    fn the_simulations_releases_are_labelled_research_mode() {
        let f = schema("federated simulate").unwrap();
        for path in ["selected", "selected_hyperparameters.lr", "noisy_counts[]"] {
            match f.classify(path).map(|d| d.class) {
                Some(Class::PrivateRelease { charge }) => {
                    assert!(charge.contains("research mode"), "{path}: {charge}")
                }
                other => panic!("{path}: {other:?}"),
            }
        }
        for path in ["seeded", "research"] {
            assert!(f.classify(path).is_some(), "{path}");
        }
    }
}
