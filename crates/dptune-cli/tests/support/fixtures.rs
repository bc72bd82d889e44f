//! Small inputs shared by the CLI tests that run every command: a two-column CSV with its
//! schema, a one-configuration DP-SGD space and a score table for `study`.

#![allow(dead_code)] // each including test uses a different subset

/// The schema of [`records`]: a binary label `y` and one numeric feature `a` in [0, 1].
pub const SCHEMA: &str = "[label]\nkind = \"class\"\ncolumn = \"y\"\nvalues = [\"no\", \"yes\"]\n\
                          [[feature]]\nkind = \"numeric\"\ncolumn = \"a\"\nlow = 0\nhigh = 1\n";
/// A DP-SGD search space with one configuration.
pub const DPSGD_SPACE: &str = "[learning_rate]\nvalues = [1.0]\n[clip_norm]\nvalues = [1.0]\n\
                               [epochs]\nvalues = [1]\n[batch_size]\nvalues = [32]\n";

/// 200 records of [`SCHEMA`].
pub fn records() -> String {
    let mut s = String::from("a,y\n");
    for i in 0..200 {
        let a = (i * 37 % 101) as f64 / 100.0;
        s.push_str(&format!("{a},{}\n", if a > 0.5 { "yes" } else { "no" }));
    }
    s
}

/// A score table for `study`: 10 learning rates, two seeds.
pub fn table() -> String {
    let mut s = String::from("lr,acc_seed0,acc_seed1\n");
    for i in 0..10 {
        let v = 0.5 + 0.04 * i as f64;
        s.push_str(&format!("{i},{v},{}\n", v - 0.01));
    }
    s
}
