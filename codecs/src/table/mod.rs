//! `table`: whitespace-aligned tables (`ls -l` and `ls -lR`, `ps aux`, `df -h`, `dpkg -l`,
//! `pip list`, `git blame`, `kubectl get`) with their padding collapsed to one space and the
//! columns that hold one value in every row said once; the inverse puts every space back.
//!
//! Text payloads only (a JSON payload is [`Outcome::Unchanged`]); lossless, so it acts from
//! `minimal` up (at `none`: unchanged). The output is always strictly smaller than the input,
//! else the payload is unchanged.
//!
//! # Output
//!
//! The first line is a note that says in words what was taken out; then every line of the
//! input, in order: each row with its words one space apart and its constant columns left
//! out, every other line as it was. `ls -l` becomes:
//!
//! ```text
//! [table: 9 columns, padding collapsed to one space; right-aligned: 2, 5, 7, 8; column 3 is "root" and column 4 is "root" in every row]
//! total 92
//! -rw-r--r-- 1 3211 Jul 24 2006 blocking.rs
//! drwxr-xr-x 14 4096 Dec 7 17:58 runtime
//! ```
//!
//! The note is `[table: N columns, padding collapsed to one space`, then these clauses, each
//! only when it has something to say and in this order, then `]`:
//!
//! - `; right-aligned: 2, 5`: the right-aligned columns, numbered from 1, in increasing order;
//! - `; G spaces between columns`: columns `G` (2 or more) spaces apart rather than 1;
//! - `; min widths: 2=9, 7=8`: columns padded wider than their widest cell (`ps aux`'s fixed
//!   widths, `ls -l`'s time column, five wide even where every file shows a year);
//! - `; column 3 is "root" and column 4 is "root" in every row`: constant columns, left out of
//!   the rows; with ` after the first` (or ` after the first N`, N being 2 or 3) the first row
//!   (or the first N) keeps them: a header, as `dpkg -l`'s `||/` above its `ii`s, or a header
//!   and its rule, as `pip list -v`'s above its one `Location`;
//! - `; line 21 below is not a row` or `; lines 3-4, 9 below are not rows`: lines kept as
//!   they were that would read as rows (a `pip` notice under a two-column table); line 1 is
//!   the line after the note, and a run of lines is one range.
//!
//! # The table
//!
//! A table has `N` columns. Each column holds one word in a row (characters other than the
//! space, at least one), except a left-aligned last column, which is free text: the rest of
//! the line, which may be empty and may hold spaces (a file name, a description, a command
//! line, a line of code and its indentation). A right-aligned last column makes a table
//! without free text. The lines are cut into *sections* at blank lines (empty, or only
//! spaces, tabs and carriage returns): `ls -lR` has one a folder. In each section, each
//! column is as wide as its widest cell among the section's rows, or its min width if that
//! is wider; widths count characters. The columns are `G` spaces apart, each cell left- or
//! right-aligned in its column's width; the free text starts `G` spaces after the last
//! column (so a carriage return ending the line ends the free text). A *row* is a line
//! written exactly so; every other line (`total 48`, a folder's name, a legend, a line that
//! overflows a column) is kept as it is.
//!
//! Reading back, a line below the note is a row when it is not blank, the note does not
//! list it, and it holds the words of a row (all the columns but the free text, less the
//! constant ones) one space apart, followed by a space and the free text, or by nothing in a
//! table without free text; under ` after the first N`, the first N rows hold all the words
//! of a row, the constant ones too. Each section's widths are then found from its rows, and
//! every row written back with its padding.
//!
//! # Finding the columns
//!
//! Columns are found in the first 1000 lines of the largest section: column after column,
//! where the most lines start (left-aligned) or end (right-aligned) their word, while at
//! least half of the lines still taken have a word there and three quarters of those share
//! that place; a line that does not is no longer taken (a title, a legend). The last column
//! found, when left-aligned, is where the free text starts: its first word aligns, the words
//! after it do not. A column whose words all have one width there takes its alignment from
//! the other sections, and a column whose words sit wider apart in some section than its
//! widest cell there takes that width as its min width. Each section then takes as rows the
//! lines whose words share the section's most common places and sit exactly where its widths
//! put them (a line dropped may narrow a column, so this is done again, at most 4 times); a
//! section whose rows do not settle keeps all its lines as they are.
//!
//! # When it declines
//!
//! The payload is unchanged when:
//!
//! - fewer than two of the first 16 lines hold a run of two spaces after a word (prose, code
//!   and logs stop at this first test);
//! - fewer than two columns align, a table has more than 32 columns or a column is wider
//!   than 4096 characters, or the columns found do not share one gap and one set of widths;
//! - it has fewer than 3 rows;
//! - other lines that would read as rows make more than 8 runs (with the constant columns
//!   kept in the rows, which leaves fewer lines that read as rows);
//! - what it saves is worth less than the note: about a token for each run of two or more
//!   spaces collapsed and for each 4 bytes of constant values left out, against a token for
//!   each 3 bytes of note;
//! - the output is not smaller, the input is 4 GiB or more, or it is more than 64 times the
//!   size of the output (the inverse refuses to expand more than that).
//!
//! # Cutting an output to a size
//!
//! [`Table::cut`] (the codec's `CUT`, which the host asks for when a result is over its
//! `max_result_chars`) keeps the head whole or not at all (the note, the lines down to the
//! first row, the first row, the rows that keep the constant columns and the rules under
//! them), then whole lines. The lines below the note are the original's, one for one, so what
//! the cut removes is one range of the original, and the marker says so:
//! `[… cut at max_result_chars: R of T rows not shown, original lines A-B; wm_get_result {"lines":"A-B"}]`
//! (the wording is shared with `hits` and `paths`, see `crate::cut`). A cut table is for
//! reading: the inverse finds a section's widths from all its rows.
//!
//! # Examples
//!
//! ```
//! use parrot_codec_api::{Codec, Level, Outcome, Params, Payload};
//!
//! let table: parrot_codecs::Table = parrot_codec_api::build(Params::empty()).unwrap();
//! let listing = "\
//! Package            Version
//! ------------------ ----------
//! annotated-types    0.7.0
//! asttokens          3.0.1
//! attrs              26.1.0
//! boto3              1.42.3
//! botocore           1.42.3
//! certifi            2025.11.12
//! cffi               2.0.0
//! charset-normalizer 3.4.4
//! click              8.3.1
//! cloudpickle        2.1.0
//! colorama           0.4.6
//! cryptography       46.0.3
//! decorator          5.2.1
//! docker             7.1.0
//! docutils           0.19
//! executing          2.2.1
//! flask-cors         6.0.2
//! graphql-core       3.2.8
//! idna               3.11
//! jinja2             3.1.6
//! ";
//! let Outcome::Changed { payload, lossy: false } =
//!     table.compress(Payload::text_only(listing), Level::Minimal).unwrap()
//! else {
//!     panic!("a pip list is a table");
//! };
//! assert!(payload.starts_with(
//!     "[table: 2 columns, padding collapsed to one space]\nPackage Version\n"
//! ));
//! assert!(payload.contains("\nannotated-types 0.7.0\nasttokens 3.0.1\n"));
//! assert_eq!(table.expand(&payload).unwrap(), listing);
//! ```

mod cut;
mod decode;
mod detect;
mod encode;
mod note;
#[cfg(test)]
mod props;
mod scan;
#[cfg(test)]
mod tests;

use parrot_codec_api::{Codec, CodecError, Cut, Inverse, Level, Outcome, Params, Payload};

/// The most a payload of this codec expands to, as a multiple of its size: the inverse
/// refuses more, and the codec leaves a table that would need more unchanged.
const MAX_EXPANSION: usize = 64;

/// The `table` codec: see the [module documentation](self).
#[derive(Debug)]
pub struct Table;

impl Table {
    /// Rebuilds the text of a lossless outcome: the padding of every row put back.
    ///
    /// # Errors
    ///
    /// [`CodecError`] of kind `InvalidInput`, naming the line, when `payload` is not text
    /// this codec wrote.
    pub fn expand(&self, payload: &str) -> Result<String, CodecError> {
        decode::expand(payload)
    }
}

impl Codec for Table {
    const NAME: &'static str = "table";
    const INVERSE: Option<Inverse<Self>> = Some(Self::expand);
    const CUT: Option<Cut<Self>> = Some(Self::cut);

    fn new(_: &mut Params) -> Result<Self, CodecError> {
        Ok(Table)
    }

    fn compress(&self, payload: Payload<'_>, level: Level) -> Result<Outcome, CodecError> {
        if payload.is_json() || !level.allows_change() {
            return Ok(Outcome::Unchanged);
        }
        let input = payload.text();
        let done = encode::compress(input).map(|text| crate::Transformed { text, lossy: false });
        Ok(crate::Transformed::outcome(done, input))
    }
}

inventory::submit! { crate::Builtin::of::<Table>() }
