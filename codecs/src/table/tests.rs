use parrot_codec_api::{Codec, Level, Outcome, Payload};

use super::Table;

fn o200k(text: &str) -> usize {
    parrot_bpe::O200K_BASE.count(text)
}

fn compress(input: &str) -> Outcome {
    Table
        .compress(Payload::text_only(input), Level::Minimal)
        .unwrap()
}

/// The outcome on `input`, checked: unchanged, or lossless, smaller, and expanding back to
/// `input`; and its output compressed again is unchanged or expands back to it too.
#[track_caller]
fn round_trip(input: &str) -> Option<String> {
    let Outcome::Changed { payload, lossy } = compress(input) else {
        return None;
    };
    assert!(!lossy, "lossy outcome on {input:?}");
    assert!(payload.len() < input.len(), "not smaller on {input:?}");
    let back = Table.expand(&payload);
    assert_eq!(back.as_deref(), Ok(input), "output:\n{payload}");
    if let Outcome::Changed { payload: again, .. } = compress(&payload) {
        assert_eq!(Table.expand(&again).as_deref(), Ok(payload.as_str()));
    }
    Some(payload)
}

/// `pip list` of 19 packages.
const PIP: &str = "\
Package                   Version
------------------------- -----------
annotated-types           0.7.0
antlr4-python3-runtime    4.13.2
asttokens                 3.0.1
attrs                     26.1.0
aws-sam-translator        1.110.0
aws-xray-sdk              2.15.0
boto3                     1.42.3
botocore                  1.42.3
certifi                   2025.11.12
charset-normalizer        3.4.4
click                     8.3.1
cryptography              46.0.3
decorator                 5.2.1
docker                    7.1.0
docutils                  0.19
executing                 2.2.1
Flask                     3.1.3
flask-cors                6.0.2
graphql-core              3.2.8
";

/// `ls -l` of a crate's sources: a `total` line, right-aligned link counts and sizes, a
/// date of three columns (the day and the time right-aligned).
const LS: &str = "\
total 92
-rw-r--r--  1 root root  3211 Jul 24  2006 blocking.rs
drwxr-xr-x  2 root root  4096 Dec  7 17:58 doc
drwxr-xr-x  4 root root  4096 Dec  7 17:58 fs
drwxr-xr-x  2 root root  4096 Dec  7 17:58 future
-rw-r--r--  1 root root    59 Jul 24  2006 fuzz.rs
drwxr-xr-x  5 root root  4096 Dec  7 17:58 io
-rw-r--r--  1 root root 27259 Jul 24  2006 lib.rs
drwxr-xr-x  3 root root  4096 Dec  7 17:58 loom
drwxr-xr-x  2 root root  4096 Dec  7 17:58 macros
drwxr-xr-x  5 root root  4096 Dec  7 17:58 net
drwxr-xr-x  3 root root  4096 Dec  7 17:58 process
drwxr-xr-x 14 root root  4096 Dec  7 17:58 runtime
drwxr-xr-x  3 root root  4096 Dec  7 17:58 signal
drwxr-xr-x  6 root root  4096 Dec  7 17:58 sync
drwxr-xr-x  3 root root  4096 Dec  7 17:58 task
drwxr-xr-x  2 root root  4096 Dec  7 17:58 time
drwxr-xr-x  3 root root  4096 Dec  7 17:58 util
";

/// `dpkg -l`: three lines of legend, the header, the rule, then rows whose status is `ii`.
const DPKG: &str = "\
Desired=Unknown/Install/Remove/Purge/Hold
| Status=Not/Inst/Conf-files/Unpacked/halF-conf/Half-inst/trig-aWait/Trig-pend
|/ Err?=(none)/Reinst-required (Status,Err: uppercase=bad)
||/ Name                      Version            Architecture Description
+++-=========================-==================-============-========================================
ii  adduser                   3.134              all          add and remove users and groups
ii  adwaita-icon-theme        43-1               all          default icon theme of GNOME
ii  alsa-topology-conf        1.2.5.1-2          all          ALSA topology configuration files
ii  alsa-ucm-conf             1.2.8-1            all          ALSA Use Case Manager configuration files
ii  appstream                 0.16.1-2           amd64        Software component metadata management
ii  apt                       2.6.1              amd64        commandline package manager
ii  apt-transport-https       2.6.1              all          transitional package for https support
ii  at-spi2-common            2.46.0-5           all          Assistive Technology Service Provider Interface (common files)
ii  at-spi2-core              2.46.0-5           amd64        Assistive Technology Service Provider Interface (D-Bus core)
ii  base-files                12.4+deb12u11      amd64        Debian base system miscellaneous files
ii  base-passwd               3.6.1              amd64        Debian base system master password and group files
ii  bash                      5.2.15-2+b8        amd64        GNU Bourne Again SHell
ii  bc                        1.07.1-3+b1        amd64        GNU bc arbitrary precision calculator language
ii  binutils                  2.40-2             amd64        GNU assembler, linker and binary utilities
ii  binutils-common:amd64     2.40-2             amd64        Common files for the GNU assembler, linker and binary utilities
ii  binutils-x86-64-linux-gnu 2.40-2             amd64        GNU binary utilities, for x86-64-linux-gnu target
ii  bsdextrautils             2.38.1-5+deb12u3   amd64        extra utilities from 4.4BSD-Lite
ii  bsdutils                  1:2.38.1-5+deb12u3 amd64        basic utilities from 4.4BSD-Lite
ii  build-essential           12.9               amd64        Informational list of build-essential packages
ii  bzip2                     1.0.8-5+b1         amd64        high-quality block-sorting file compressor - utilities
ii  bzip2-doc                 1.0.8-5            all          high-quality block-sorting file compressor - documentation
ii  ca-certificates           20230311+deb12u1   all          Common CA certificates
ii  ca-certificates-java      20230710~deb12u1   all          Common CA certificates (JKS keystore)
ii  coreutils                 9.1-1              amd64        GNU core utilities
ii  cpp                       4:12.2.0-3         amd64        GNU C preprocessor (cpp)
";

/// `ps aux`: fixed widths wider than the cells, a `USER` that is `root` below the header.
const PS: &str = "\
USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND
root         1  0.5  0.0  55100 14228 ?        S<Ll 17:57   0:02 /process_api --addr 0.0.0.0:2024
root         2  0.0  0.0      0     0 ?        S    17:57   0:00 [kthreadd]
root         3  0.0  0.0      0     0 ?        S    17:57   0:00 [pool_workqueue_release]
root        30  0.0  0.0      0     0 ?        I    17:57   0:00 [rcu_tasks_rude_kthread]
root         4  0.0  0.0      0     0 ?        I<   17:57   0:00 [kworker/R-rcu_gp]
root         5  0.0  0.0      0     0 ?        I<   17:57   0:00 [kworker/R-sync_wq]
root         6  0.0  0.0      0     0 ?        I<   17:57   0:00 [kworker/R-slub_flushwq]
root         7  0.0  0.0      0     0 ?        I<   17:57   0:00 [kworker/R-netns]
root        10  0.0  0.0      0     0 ?        I<   17:57   0:00 [kworker/0:0H-events_highpri]
root        13  0.0  0.0      0     0 ?        I<   17:57   0:00 [kworker/R-mm_percpu_wq]
root        14  0.0  0.0      0     0 ?        I    17:57   0:00 [rcu_tasks_kthread]
root        15  0.0  0.0      0     0 ?        S    17:57   0:00 [ksoftirqd/0]
root        16  0.0  0.0      0     0 ?        I    17:57   0:00 [rcu_preempt]
root        17  0.0  0.0      0     0 ?        S    17:57   0:00 [rcu_exp_par_gp_kthread_worker/0]
root       512  0.1  0.3 102400 50132 pts/0    Ss   17:58   0:01 -bash
root      2903  0.0  0.0   3760  2088 pts/0    R+   18:14   0:00 ps aux
";

/// `git blame` of one commit: every column but the line number and the code is constant.
const BLAME: &str = "\
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300  1) #!/usr/bin/env bash
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300  2) set -e
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300  3) 
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300  4) if [ \"$1\" = \"--debug\" ]; then
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300  5)   export PYENV_DEBUG=1
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300  6)   shift
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300  7) fi
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300  8) 
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300  9) if [ -n \"$PYENV_DEBUG\" ]; then
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300 10)   export PS4='+ [${BASH_SOURCE##*/}:${LINENO}] '
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300 11)   set -x
^f6a5b40 (native-api 2026-05-08 20:20:32 +0300 12) fi
";

/// `ls -lR`: sections of their own widths, each with its path and `total` lines.
const LS_R: &str = "\
/src/serde:
total 48
-rw-r--r-- 1 root root 1592 Jul 24  2006 Cargo.lock
-rw-r--r-- 1 root root 1969 Jul 24  2006 Cargo.toml
-rw-r--r-- 1 root root 9723 Jul 24  2006 LICENSE-APACHE
drwxr-xr-x 4 root root 4096 Dec  7 17:58 src

/src/serde/src:
total 24
drwxr-xr-x 5 root root  4096 Dec  7 17:58 core
-rw-r--r-- 1 root root   480 Jul 24  2006 integer128.rs
-rw-r--r-- 1 root root 11673 Jul 24  2006 lib.rs
drwxr-xr-x 2 root root  4096 Dec  7 17:58 private

/src/serde/src/core:
total 48
-rw-r--r-- 1 root root 7081 Jul 24  2006 crate_root.rs
drwxr-xr-x 2 root root 4096 Dec  7 17:58 de
-rw-r--r-- 1 root root  726 Jul 24  2006 format.rs
-rw-r--r-- 1 root root 4351 Jul 24  2006 lib.rs
-rw-r--r-- 1 root root 8276 Jul 24  2006 macros.rs
drwxr-xr-x 2 root root 4096 Dec  7 17:58 private
drwxr-xr-x 2 root root 4096 Dec  7 17:58 ser
-rw-r--r-- 1 root root 1351 Jul 24  2006 std_error.rs

/src/serde/src/core/de:
total 236
-rw-r--r-- 1 root root  6154 Jul 24  2006 ignored_any.rs
-rw-r--r-- 1 root root 97134 Jul 24  2006 impls.rs
-rw-r--r-- 1 root root 83879 Jul 24  2006 mod.rs
-rw-r--r-- 1 root root 48848 Jul 24  2006 value.rs
";

/// `df -h`: right-aligned sizes wider than their cells, a header whose last column holds a
/// space.
const DF: &str = "\
Filesystem      Size  Used Avail Use% Mounted on
udev             16G     0   16G   0% /dev
tmpfs           3.2G  2.1M  3.2G   1% /run
/dev/nvme0n1p2  468G  201G  244G  46% /
tmpfs            16G  145M   16G   1% /dev/shm
tmpfs           5.0M  4.0K  5.0M   1% /run/lock
/dev/nvme0n1p1  511M  6.1M  505M   2% /boot/efi
tmpfs           3.2G  156K  3.2G   1% /run/user/1000
/dev/sdb1       1.8T  1.2T  561G  69% /mnt/data
";

/// Three columns of words, the last two right-aligned: no free text.
const SIZES: &str = "alpha     12 1.5K\nbeta    1234  12M\ngamma      5  300\ndelta    678 4.0G\nepsilon   90  56K\nzeta    4321 7.8M\neta        7    9\ntheta     88  10G\niota     100 1.1K\nkappa      1  222\nlambda    23 3.3M\nmu       456  44K\nnu      7890    5\nxi         2  66G\nomicron   34 7.7K\npi       567  800\n";

/// `pip list` of 18 packages, and the same with its padding collapsed.
const PIP_SHORT: &str = "Package            Version\n------------------ ----------\nannotated-types    0.7.0\nasttokens          3.0.1\nattrs              26.1.0\nboto3              1.42.3\nbotocore           1.42.3\ncertifi            2025.11.12\ncffi               2.0.0\ncharset-normalizer 3.4.4\nclick              8.3.1\ncloudpickle        2.1.0\ncolorama           0.4.6\ncryptography       46.0.3\ndecorator          5.2.1\ndocker             7.1.0\ndocutils           0.19\nexecuting          2.2.1\nflask-cors         6.0.2\ngraphql-core       3.2.8\n";
const PIP_SHORT_ROWS: &str = "Package Version\n------------------ ----------\nannotated-types 0.7.0\nasttokens 3.0.1\nattrs 26.1.0\nboto3 1.42.3\nbotocore 1.42.3\ncertifi 2025.11.12\ncffi 2.0.0\ncharset-normalizer 3.4.4\nclick 8.3.1\ncloudpickle 2.1.0\ncolorama 0.4.6\ncryptography 46.0.3\ndecorator 5.2.1\ndocker 7.1.0\ndocutils 0.19\nexecuting 2.2.1\nflask-cors 6.0.2\ngraphql-core 3.2.8\n";

/// A note of two columns and nothing else to say.
const TWO: &str = "[table: 2 columns, padding collapsed to one space]";

/// One row per case: what it shows, the input, and the codec's output (`None`: unchanged).
fn cases() -> Vec<(&'static str, String, Option<String>)> {
    let crlf = |text: &str| text.replace('\n', "\r\n");
    let notice = "[notice] A new release of pip is available: 24.0 -> 25.3\n";
    // The rows of a `pip list` without its header and rule.
    let rows = |table: &'static str| table.splitn(3, '\n').nth(2).unwrap_or_default();
    vec![
        (
            "pip list: two columns; the rule is a row like the others",
            PIP_SHORT.to_owned(),
            Some(format!("{TWO}\n{PIP_SHORT_ROWS}")),
        ),
        (
            "without the final line break",
            PIP_SHORT.trim_end().to_owned(),
            Some(format!("{TWO}\n{}", PIP_SHORT_ROWS.trim_end())),
        ),
        (
            "CRLF lines: the carriage return ends the free text",
            crlf(PIP_SHORT),
            Some(format!("{TWO}\n{}", crlf(PIP_SHORT_ROWS))),
        ),
        (
            "a notice under a two-column table reads as a row: the note lists it",
            format!("{PIP_SHORT}{}{notice}", rows(PIP_SHORT)),
            Some(format!(
                "[table: 2 columns, padding collapsed to one space; line 39 below is not a \
                 row]\n{PIP_SHORT_ROWS}{}{notice}",
                rows(PIP_SHORT_ROWS)
            )),
        ),
        (
            "df -h: widths wider than the widest cell are stated",
            DF.to_owned(),
            Some("[table: 6 columns, padding collapsed to one space; right-aligned: 2, 3, 4, 5; min widths: 2=5, 3=5]\nFilesystem Size Used Avail Use% Mounted on\nudev 16G 0 16G 0% /dev\ntmpfs 3.2G 2.1M 3.2G 1% /run\n/dev/nvme0n1p2 468G 201G 244G 46% /\ntmpfs 16G 145M 16G 1% /dev/shm\ntmpfs 5.0M 4.0K 5.0M 1% /run/lock\n/dev/nvme0n1p1 511M 6.1M 505M 2% /boot/efi\ntmpfs 3.2G 156K 3.2G 1% /run/user/1000\n/dev/sdb1 1.8T 1.2T 561G 69% /mnt/data\n".to_owned()),
        ),
        (
            "no free text: the last column is right-aligned words",
            SIZES.to_owned(),
            Some("[table: 3 columns, padding collapsed to one space; right-aligned: 2, 3]\nalpha 12 1.5K\nbeta 1234 12M\ngamma 5 300\ndelta 678 4.0G\nepsilon 90 56K\nzeta 4321 7.8M\neta 7 9\ntheta 88 10G\niota 100 1.1K\nkappa 1 222\nlambda 23 3.3M\nmu 456 44K\nnu 7890 5\nxi 2 66G\nomicron 34 7.7K\npi 567 800\n".to_owned()),
        ),
        (
            "pip list -v: a constant column below a header and its rule",
            "Package            Version    Location                       Installer\n------------------ ---------- ------------------------------ ---------\nannotated-types    0.7.0      /usr/lib/python3/dist-packages pip\nasttokens          3.0.1      /usr/lib/python3/dist-packages pip\nattrs              26.1.0     /usr/lib/python3/dist-packages pip\nboto3              1.42.3     /usr/lib/python3/dist-packages pip\nbotocore           1.42.3     /usr/lib/python3/dist-packages pip\ncertifi            2025.11.12 /usr/lib/python3/dist-packages pip\ncffi               2.0.0      /usr/lib/python3/dist-packages pip\ncharset-normalizer 3.4.4      /usr/lib/python3/dist-packages pip\nclick              8.3.1      /usr/lib/python3/dist-packages pip\ncloudpickle        2.1.0      /usr/lib/python3/dist-packages pip\ncolorama           0.4.6      /usr/lib/python3/dist-packages pip\ncryptography       46.0.3     /usr/lib/python3/dist-packages pip\n".to_owned(),
            Some("[table: 4 columns, padding collapsed to one space; column 3 is \"/usr/lib/python3/dist-packages\" in every row after the first 2]\nPackage Version Location Installer\n------------------ ---------- ------------------------------ ---------\nannotated-types 0.7.0 pip\nasttokens 3.0.1 pip\nattrs 26.1.0 pip\nboto3 1.42.3 pip\nbotocore 1.42.3 pip\ncertifi 2025.11.12 pip\ncffi 2.0.0 pip\ncharset-normalizer 3.4.4 pip\nclick 8.3.1 pip\ncloudpickle 2.1.0 pip\ncolorama 0.4.6 pip\ncryptography 46.0.3 pip\n".to_owned()),
        ),
        ("too few rows", "a    b\nc    d\n".to_owned(), None),
        ("prose", "The quick  brown fox\njumps over  the lazy dog.\nAnd again.\n".to_owned(), None),
        ("code", "fn main() {\n    let x = 1;  // one\n    let yy = 2; // two\n}\n".to_owned(), None),
        ("one column", "a\nbb\nccc\ndddd\n".to_owned(), None),
        ("empty", String::new(), None),
    ]
}

#[test]
fn cases_compress_to_their_output_and_expand_back() {
    for (name, input, expected) in cases() {
        let outcome = compress(&input);
        assert_eq!(outcome.payload(), expected.as_deref(), "{name}");
        if let Some(payload) = expected {
            assert!(!outcome.is_lossy(), "{name}");
            assert_eq!(
                Table.expand(&payload).as_deref(),
                Ok(input.as_str()),
                "{name}"
            );
        }
    }
}

/// The captures of real commands, each with the note and the first rows of its output.
const CAPTURES: &[(&str, &str, &str)] = &[
    (
        "pip list",
        PIP,
        "[table: 2 columns, padding collapsed to one space]\nPackage Version\n------------------------- -----------\nannotated-types 0.7.0\n",
    ),
    (
        "ls -l",
        LS,
        "[table: 9 columns, padding collapsed to one space; right-aligned: 2, 5, 7, 8; column 3 is \"root\" and column 4 is \"root\" in every row]\ntotal 92\n-rw-r--r-- 1 3211 Jul 24 2006 blocking.rs\ndrwxr-xr-x 2 4096 Dec 7 17:58 doc\n",
    ),
    (
        "dpkg -l",
        DPKG,
        "[table: 5 columns, padding collapsed to one space; column 1 is \"ii\" in every row after the first]\nDesired=Unknown/Install/Remove/Purge/Hold\n| Status=Not/Inst/Conf-files/Unpacked/halF-conf/Half-inst/trig-aWait/Trig-pend\n|/ Err?=(none)/Reinst-required (Status,Err: uppercase=bad)\n||/ Name Version Architecture Description\n+++-=========================-==================-============-========================================\nadduser 3.134 all add and remove users and groups\n",
    ),
    (
        "ps aux",
        PS,
        "[table: 11 columns, padding collapsed to one space; right-aligned: 2, 3, 4, 5, 6; min widths: 2=9, 7=8, 9=7; column 1 is \"root\" in every row after the first]\nUSER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND\n1 0.5 0.0 55100 14228 ? S<Ll 17:57 0:02 /process_api --addr 0.0.0.0:2024\n",
    ),
    (
        "git blame",
        BLAME,
        "[table: 7 columns, padding collapsed to one space; right-aligned: 6; column 1 is \"^f6a5b40\" and column 2 is \"(native-api\" and column 3 is \"2026-05-08\" and column 4 is \"20:20:32\" and column 5 is \"+0300\" in every row]\n1) #!/usr/bin/env bash\n2) set -e\n3) \n4) if [ \"$1\" = \"--debug\" ]; then\n5)   export PYENV_DEBUG=1\n",
    ),
    (
        "ls -lR",
        LS_R,
        "[table: 9 columns, padding collapsed to one space; right-aligned: 5, 7, 8; min widths: 8=5; column 3 is \"root\" and column 4 is \"root\" in every row]\n/src/serde:\ntotal 48\n-rw-r--r-- 1 1592 Jul 24 2006 Cargo.lock\n",
    ),
];

#[test]
fn captures_start_with_their_note_and_expand_back() {
    for (name, input, start) in CAPTURES {
        let payload = round_trip(input).unwrap_or_else(|| panic!("{name}: unchanged"));
        assert!(payload.starts_with(start), "{name}:\n{payload}");
    }
}

#[test]
fn captures_save_tokens() {
    // The least share of o200k tokens each capture saves.
    for (input, least) in [
        (LS, 5),
        (DPKG, 12),
        (PS, 12),
        (BLAME, 50),
        (PIP, 2),
        (LS_R, 1),
    ] {
        let payload = round_trip(input).unwrap();
        let (before, after) = (o200k(input), o200k(&payload));
        assert!(
            (before - after) * 100 >= before * least,
            "{before} -> {after} tokens, under {least}% saved:\n{payload}"
        );
    }
}

#[test]
fn the_contract_holds_on_the_corpus_and_the_captures() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
    let fixtures = [PIP, LS, DPKG, PS, BLAME, LS_R, DF, SIZES];
    let made = (fixtures.iter().map(|text| text.to_string()))
        .chain(cases().into_iter().map(|(_, input, _)| input))
        .enumerate()
        .map(|(i, text)| (format!("made {i}"), text))
        .collect();
    parrot_codec_test::assert_contract_on::<Table>(&["{}"], corpus, made);
}

/// Token savings on a folder of captures (`TABLE_CAPTURES`, one command's output a file),
/// each checked to expand back, the outputs written to the folder `TABLE_OUTPUTS` if set: `TABLE_CAPTURES=/tmp/captures cargo test -p parrot-codecs
/// --lib table::tests::captures -- --ignored --nocapture`.
#[test]
#[ignore = "reads the captures in the folder TABLE_CAPTURES names"]
fn captures() {
    let dir = std::env::var("TABLE_CAPTURES").expect("TABLE_CAPTURES names a folder");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let input = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match round_trip(&input) {
            None => println!("{name:30} unchanged"),
            Some(payload) => {
                if let Ok(outputs) = std::env::var("TABLE_OUTPUTS") {
                    std::fs::write(format!("{outputs}/{name}"), &payload).unwrap();
                }
                let (before, after) = (o200k(&input), o200k(&payload));
                let saved = 100.0 * (before - after) as f64 / before as f64;
                println!("{name:30} {before:>7} -> {after:>7} tokens, {saved:5.1}% saved");
            }
        }
    }
}

/// One row per bad payload: the payload and the inverse's error.
const BAD: &[(&str, &str)] = &[
    (
        "",
        "line 1: expected the note `[table: N columns, padding collapsed to one space…]`, found nothing",
    ),
    (
        "hello\nworld",
        "line 1: expected the note `[table: N columns, padding collapsed to one space…]`, found `hello`",
    ),
    (
        "[table: 3 columns, padding collapsed to one space]",
        "line 1: the note has no table below it (line 2 is missing)",
    ),
    (
        "[table: 1 columns, padding collapsed to one space]\na b",
        "line 1: a table of 1 columns: expected 2 to 32",
    ),
    (
        "[table: 40 columns, padding collapsed to one space]\na b",
        "line 1: a table of 40 columns: expected 2 to 32",
    ),
    (
        "[table: x columns, padding collapsed to one space]\na b",
        "line 1: expected the number of columns (a number), found `x columns, padding collapsed to one space]`",
    ),
    (
        "[table: 03 columns, padding collapsed to one space]\na b",
        "line 1: expected the number of columns (a number), found `03 columns, padding collapsed to one space]`",
    ),
    (
        "[table: 3 columns, padding removed]\na b",
        "line 1: expected ` columns, padding collapsed to one space` after the number of columns, found ` columns, padding removed]`",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; right-aligned: 4]\na b c",
        "line 1: column 4 of a table of 3 columns",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; right-aligned: 2, 1]\na b c",
        "line 1: column 1 after column 2: columns are listed in increasing order",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; 1 spaces between columns]\na b c",
        "line 1: the note is not written as this codec writes it: expected `[table: 3 columns, padding collapsed to one space]`",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; min widths: 3=4]\na b c",
        "line 1: column 3 is the free text, which has no width and no constant value",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; min widths: 2=0]\na b c",
        "line 1: a min width of 0 for column 2: a min width is at least 1",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; min widths: 2]\na b c",
        "line 1: expected `=` and a width after column 2, found `]`",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; min widths: 1=99999]\na b c",
        "line 1: a min width of 99999: expected at most 4096",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; column 1 is \"x]\na b c",
        "line 1: the value of column 1 has no closing quote",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; column 1 is \"a b\" in every row]\na b c",
        "line 1: the value of column 1, `a b`, is not one word",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; column 1 is \"x\"]\na b c",
        "line 1: expected ` in every row` after the constant columns, found `]`",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; column 1 is \"x\" and column 2 is \"y\" in every row]\na b c",
        "line 1: every column of words is constant: a row would have no word left",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; column 1 is \"x\" in every row after the first 1]\na b c",
        "line 1: the first 1 rows keep the constant columns: expected 2 to 3 (1 is written `after the first`)",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; column 1 is \"x\" in every row after the first 4]\na b c",
        "line 1: the first 4 rows keep the constant columns: expected 2 to 3 (1 is written `after the first`)",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; line 0 below is not a row]\na b c",
        "line 1: line 0: the lines below the note are numbered from 1",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; lines 4-2 below are not rows]\na b c",
        "line 1: line 2 listed after line 4: lines are listed in increasing order, a run of lines as one range `A-B`",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; lines 2-3, 4 below are not rows]\na b c\nd e f\ng h i\nj k l",
        "line 1: line 4 listed after line 3: lines are listed in increasing order, a run of lines as one range `A-B`",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; line 9 below is not a row]\na b c",
        "line 1: the note lists line 9 below it as not a row, but there is one line below it",
    ),
    (
        "[table: 3 columns, padding collapsed to one space] trailing\na b c",
        "line 1: expected `; right-aligned: `, `; N spaces between columns`, `; min widths: `, `; column `, `; line `, `; lines ` or the closing `]`, found `] trailing`",
    ),
    (
        "[table: 3 columns, padding collapsed to one space]\nab\ncd",
        "lines 2-3: no row below the note: no line holds 2 words one space apart followed by a space and free text",
    ),
    (
        "[table: 3 columns, padding collapsed to one space; min widths: 1=4096, 2=4096]\na b c\na b c",
        "line 2: the table would expand to more than 64 times its size",
    ),
];

#[test]
fn expand_refuses_what_the_codec_does_not_write() {
    for (payload, message) in BAD {
        let err = Table.expand(payload).unwrap_err();
        assert_eq!(
            err.kind(),
            parrot_codec_api::ErrorKind::InvalidInput,
            "{payload:?}"
        );
        assert_eq!(err.to_string(), *message, "{payload:?}");
    }
}

/// `text`'s lines after the first `skip`, repeated after them until the text holds `size`
/// bytes.
fn grown(text: &str, skip: usize, size: usize) -> String {
    let head: String = text.split_inclusive('\n').take(skip).collect();
    let body: String = text.split_inclusive('\n').skip(skip).collect();
    let mut out = head;
    while out.len() < size {
        out.push_str(&body);
    }
    out
}

/// The fastest of a few runs of `f`, in seconds.
fn fastest<T>(mut f: impl FnMut() -> T) -> f64 {
    (0..7)
        .map(|_| {
            let start = std::time::Instant::now();
            std::hint::black_box(f());
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The codec's time and its inverse's against `text.split('\n').count()` of the same bytes:
/// `cargo test --release -p parrot-codecs --lib table::tests::speed -- --ignored --nocapture`.
#[test]
#[ignore = "measures speed; run in release"]
fn speed() {
    let only = std::env::var("TABLE_SPEED_ONLY").unwrap_or_default();
    // What declining costs: on a log, and on prose padded with double spaces, which passes
    // the first test.
    let words = [
        "a", "table", "of", "words", "padded", "with", "spaces", "here", "x",
    ];
    let prose = (0..200_000)
        .map(|i| {
            let word = |n: usize| words[(i * 7 + n * 3) % words.len()];
            format!("{} {}  {} {} {}\n", word(0), word(1), word(2), word(3), i)
        })
        .collect::<String>();
    for size in [1 << 20, 10 << 20] {
        let log = parrot_bench_corpus::log_payload(size);
        for (name, text) in [
            ("a log", log.as_str()),
            ("prose", &prose[..size.min(prose.len())]),
        ] {
            assert_eq!(compress(text), Outcome::Unchanged, "{name}");
            let split = fastest(|| text.split('\n').count());
            let codec = fastest(|| compress(text));
            println!(
                "{name:8} {:>3} MB: split {:7.3} ms, declined in {:7.3} ms ({:5.1}x)",
                text.len() >> 20,
                split * 1e3,
                codec * 1e3,
                codec / split
            );
        }
    }
    for (name, text, skip) in [("dpkg -l", DPKG, 5), ("ls -lR", LS_R, 0), ("ps aux", PS, 1)] {
        if !name.contains(only.as_str()) {
            continue;
        }
        let sizes: Vec<usize> = std::env::var("TABLE_SPEED_MB").map_or(vec![1, 10], |v| {
            v.split(',').map(|n| n.parse().unwrap()).collect()
        });
        for size in sizes.into_iter().map(|mb| mb << 20) {
            let input = grown(&format!("{text}\n"), skip, size);
            let payload = round_trip(&input).unwrap();
            let split = fastest(|| input.split('\n').count());
            let codec = fastest(|| compress(&input));
            let inverse = fastest(|| Table.expand(&payload));
            println!(
                "{name:8} {:>3} MB: split {:7.3} ms, compress {:7.3} ms ({:5.1}x), expand {:7.3} ms ({:5.1}x)",
                size >> 20,
                split * 1e3,
                codec * 1e3,
                codec / split,
                inverse * 1e3,
                inverse / split
            );
        }
    }
}

/// Issue 48: a cut of this codec's output was the host's, as text, its selector the whole
/// original. On every table capture the codec acts on and at many rooms, the codec's own cut
/// keeps the rules of a cut, keeps the note and the head (down to the first row, and the rule
/// under it) or nothing, shows the original's first lines one for one, counts the rows it
/// removed exactly, and its selector returns exactly the original lines the kept part does
/// not show.
#[test]
fn a_cut_keeps_the_head_and_whole_lines_and_its_selector_returns_the_lines_removed() {
    use crate::cut::check::{assert_rules, captures, lines, read, rooms};
    let mut cut_captures = 0;
    for (name, input) in captures("table-") {
        let Some(output) = round_trip(&input) else {
            continue;
        };
        cut_captures += 1;
        let original = Payload::text_only(&input);
        let (rows, _) = super::decode::rows(&output).unwrap();
        let out_lines: Vec<&str> = output.lines().collect();
        let in_lines: Vec<&str> = input.lines().collect();
        let first_row = rows.iter().position(|&row| row).unwrap();
        for room in rooms(&output) {
            let cut = Table.cut(original, &output, room).expect(&name);
            assert_rules(&output, &cut, room, &name);
            let marker = read(&cut.marker, ("row", "rows"));
            let kept = &output[..cut.kept];
            let at = format!("{name}, room {room}: {}", cut.marker);
            assert_eq!(marker.to, in_lines.len(), "{at}");
            let kept_lines = kept.lines().count();
            if kept_lines > 0 {
                // The note, then the original's lines one for one, from the first.
                assert!(kept.starts_with("[table: "), "{at}");
                assert!(kept_lines >= first_row + 2, "{at}: the head cut");
                assert_eq!(kept_lines - 1, marker.from - 1, "{at}");
            } else {
                assert_eq!(marker.from, 1, "{at}");
            }
            for k in 0..marker.from - 1 {
                let (shown, line) = (out_lines[k + 1], in_lines[k]);
                let mut words = line.split_whitespace();
                assert!(
                    shown
                        .split(' ')
                        .all(|word| word.is_empty() || words.any(|w| w == word)),
                    "{at}: {shown:?} does not show {line:?}"
                );
            }
            let removed = lines(&input, marker.from, marker.to);
            assert_eq!(
                removed,
                in_lines[marker.from - 1..].join("\n") + "\n",
                "{at}"
            );
            let all_rows = rows.iter().filter(|&&row| row).count();
            let kept_rows = rows[..marker.from - 1].iter().filter(|&&row| row).count();
            assert_eq!(
                (marker.total, marker.removed),
                (all_rows, all_rows - kept_rows),
                "{at}"
            );
            if room >= 2_000 {
                assert!(kept_lines > 0, "{at}");
            }
        }
    }
    assert!(cut_captures >= 5, "{cut_captures} captures tabulated");
}

#[test]
fn a_cut_of_pip_list_keeps_the_column_names_and_their_rule() {
    let output = round_trip(PIP).unwrap();
    let original = Payload::text_only(PIP);
    let head = "[table: 2 columns, padding collapsed to one space]\nPackage Version\n\
                ------------------------- -----------\n";
    assert!(output.starts_with(head), "{output}");
    let marker_cost =
        parrot_codec_api::json_string_chars(&Table.cut(original, &output, 0).unwrap().marker);
    let head_cost = parrot_codec_api::json_string_chars(head);
    for (room, kept) in [
        (head_cost + marker_cost - 1, 0),
        (head_cost + marker_cost, head.len()),
    ] {
        let cut = Table.cut(original, &output, room).unwrap();
        assert_eq!(cut.kept, kept, "room {room}: {}", cut.marker);
        assert_eq!(
            cut.marker,
            "[\u{2026} cut at max_result_chars: 19 of 21 rows not shown, original lines 3-21; \
             wm_get_result {\"lines\":\"3-21\"}]"
                .replace("3-21", if kept == 0 { "1-21" } else { "3-21" })
                .replace("19 of", if kept == 0 { "21 of" } else { "19 of" })
        );
    }
}

#[test]
fn a_text_that_is_not_the_codecs_output_of_the_original_is_not_cut_by_its_grammar() {
    let output = round_trip(PIP).unwrap();
    let other = PIP.replace("0.7.0", "0.7.1");
    let cases = [
        (
            "another original",
            Payload::text_only(&other),
            output.as_str(),
        ),
        ("a JSON original", Payload::json(PIP), output.as_str()),
        ("an empty output", Payload::text_only(PIP), ""),
        ("not a table output", Payload::text_only(PIP), PIP),
    ];
    for (name, original, text) in cases {
        assert_eq!(Table.cut(original, text, 30), None, "{name}");
    }
}
