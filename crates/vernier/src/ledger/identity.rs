//! A program's identity: what makes two runs runs of the same code with the same inputs, the
//! key the ledger keeps each program's recent medians under (and a stable hash, FNV-1a,
//! that the identity and others use).

/// What makes two runs runs of the same code with the same inputs: the executable file (path,
/// size and time of its last change: a rebuild is another program), its arguments, vernier's
/// options that change what is measured (the cache mode), and this process's environment (a
/// worker inherits it; a benchmark sized by `CHAIN_N=200` is not the one sized by
/// `CHAIN_N=100`), less [`ENV_NOT_COUNTED`].
pub fn program_identity(
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    mode: &str,
) -> Option<String> {
    program_identity_in(program, args, mode, std::env::vars_os())
}

/// Environment variables that are not inputs of what is measured, so that runs differing in
/// them are still the same benchmark: vernier's own (`VERNIER_*`: the runner's environment
/// padding, the ledger, the store), what a shell changes between two invocations of the
/// same command (`PWD`, `OLDPWD`, `SHLVL`, `_`), the terminal's and the session's (`TERM`,
/// `TERM_PROGRAM*`, `COLORTERM`, `NO_COLOR`, `COLUMNS`, `LINES`, `SSH_CLIENT`,
/// `SSH_CONNECTION`, `SSH_TTY`, `TMUX_PANE`, `WINDOWID`, `DISPLAY`, `XDG_SESSION_ID`), and what
/// cargo sets to describe the package it runs (`CARGO`, `CARGO_*`, with a jobserver that
/// changes on each invocation). A name ending in `*` is a prefix.
pub const ENV_NOT_COUNTED: [&str; 20] = [
    "VERNIER_*",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
    "TERM",
    "TERM_PROGRAM*",
    "COLORTERM",
    "NO_COLOR",
    "COLUMNS",
    "LINES",
    "SSH_CLIENT",
    "SSH_CONNECTION",
    "SSH_TTY",
    "TMUX_PANE",
    "WINDOWID",
    "DISPLAY",
    "XDG_SESSION_ID",
    "CARGO_*",
    "CARGO",
];

/// Whether environment variable `name` is one of [`ENV_NOT_COUNTED`].
pub fn env_not_counted(name: &str) -> bool {
    ENV_NOT_COUNTED.iter().any(|n| match n.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *n,
    })
}

/// [`program_identity`] with the environment `env`. The environment enters as a hash (FNV-1a
/// of the sorted `NAME=value` lines counted): the ledger never holds its values.
pub fn program_identity_in(
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    mode: &str,
    env: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Option<String> {
    let path = std::fs::canonicalize(program).ok()?;
    let meta = std::fs::metadata(&path).ok()?;
    let changed = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut vars: Vec<String> = env
        .into_iter()
        .filter(|(k, _)| !env_not_counted(&k.to_string_lossy()))
        .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
        .collect();
    vars.sort();
    Some(format!(
        "{}{BUILD}{} {changed}{BUILD}{mode} {} env {:016x}",
        path.display(),
        meta.len(),
        args.join(" "),
        fnv1a(vars.join("\n").as_bytes())
    ))
}

/// FNV-1a, 64 bits: a stable hash (the same on every build and platform).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Sets apart, in a [`program_identity`], what a rebuild changes (size, modification time).
const BUILD: char = '\u{1e}';

/// A [`program_identity`] without its build: the same executable path, arguments and cache
/// mode, any build. `None` for an identity of another form.
pub(super) fn family(program: &str) -> Option<(&str, &str)> {
    let mut parts = program.splitn(3, BUILD);
    let (path, _build, rest) = (parts.next()?, parts.next()?, parts.next()?);
    Some((path, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_is_an_input_but_the_shell_s_own_variables_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("prog");
        std::fs::write(&exe, b"build").unwrap();
        let env = |vars: &[(&str, &str)]| {
            vars.iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect::<Vec<(std::ffi::OsString, std::ffi::OsString)>>()
        };
        let id = |vars: &[(&str, &str)]| program_identity_in(&exe, &[], "hot", env(vars)).unwrap();
        let n100 = id(&[("CHAIN_N", "100"), ("HOME", "/h")]);
        assert_ne!(n100, id(&[("CHAIN_N", "200"), ("HOME", "/h")]));
        // What a shell or the runner changes between invocations does not count, nor order.
        assert_eq!(
            n100,
            id(&[
                ("HOME", "/h"),
                ("PWD", "/elsewhere"),
                ("OLDPWD", "/h"),
                ("SHLVL", "3"),
                ("_", "/usr/bin/vernier"),
                ("COLUMNS", "120"),
                ("VERNIER_ENV_PAD", "xxxx"),
                ("CARGO_MAKEFLAGS", "-j --jobserver-fds=7,8"),
                ("CHAIN_N", "100"),
            ])
        );
        // The values are not kept, only their hash.
        assert!(!n100.contains("CHAIN_N"));
        // Other sizes are other programs of other families: no spread is borrowed across them.
        assert_ne!(
            family(&n100),
            family(&id(&[("CHAIN_N", "200"), ("HOME", "/h")]))
        );
    }
}
