//! The output of `json_nested`, written in one pass over the tape in document order.

use std::borrow::Cow;
use std::collections::HashMap as StdHashMap;

use super::refs::{Refs, numbered};
use super::tape::{Kind, Tape};

/// Writes the output (see the module docs of `json_nested`).
pub(super) struct Writer<'t, 'a> {
    pub(super) out: String,
    tape: &'t Tape<'a>,
    refs: &'t Refs,
    tables: bool,
    min_rows: usize,
    /// The shortest string with a place for references (see [`numbered`]).
    long: usize,
    /// How deep the value being written sits (the payload is at 0).
    depth: usize,
    /// Something only this codec writes was written: a reference, a table below the payload's
    /// own members, or a table with an object or array in a cell.
    pub(super) nested: bool,
    /// A row's cells by column, kept between rows (a nested table takes its own).
    cells: Vec<Option<usize>>,
}

/// How one array of objects (or object of records) is written as a table.
struct Table<'a> {
    columns: Columns<'a>,
    /// The constant columns' values (by column): the node of the first row that is not a
    /// reference.
    constant: Vec<Option<usize>>,
}

/// The columns of a table, in the order first seen: the node each name was first seen on.
/// Found by decoded name: by comparing names while there are few, through a map past
/// [`FEW_COLUMNS`].
struct Columns<'a> {
    first: Vec<usize>,
    by_name: Option<StdHashMap<Cow<'a, str>, usize>>,
}

/// The most columns looked up one by one.
const FEW_COLUMNS: usize = 16;

impl<'a> Columns<'a> {
    fn new() -> Columns<'a> {
        Columns {
            first: Vec::new(),
            by_name: None,
        }
    }

    fn len(&self) -> usize {
        self.first.len()
    }

    /// The column of the member at `member`, by its decoded name.
    fn find(&self, tape: &Tape<'a>, member: usize) -> Option<usize> {
        let name = tape.name(member);
        match &self.by_name {
            Some(map) => map.get(&name.decoded()).copied(),
            None => self
                .first
                .iter()
                .position(|&column| tape.name(column).same_value(name)),
        }
    }

    /// Adds the name of the member at `member` as the last column; its index.
    fn add(&mut self, tape: &Tape<'a>, member: usize) -> usize {
        self.first.push(member);
        let column = self.first.len() - 1;
        match &mut self.by_name {
            Some(map) => {
                map.insert(tape.name(member).decoded(), column);
            }
            None if self.first.len() > FEW_COLUMNS => {
                let names = self.first.iter().enumerate();
                self.by_name = Some(names.map(|(c, &m)| (tape.name(m).decoded(), c)).collect());
            }
            None => {}
        }
        column
    }
}

impl<'t, 'a> Writer<'t, 'a> {
    pub(super) fn new(
        tape: &'t Tape<'a>,
        refs: &'t Refs,
        (tables, min_rows, long): (bool, usize, usize),
        capacity: usize,
    ) -> Writer<'t, 'a> {
        Writer {
            out: String::with_capacity(capacity),
            tape,
            refs,
            tables,
            min_rows,
            long,
            depth: 0,
            nested: false,
            cells: Vec::new(),
        }
    }

    fn scalar(&mut self, at: usize) {
        match self.tape.nodes[at].kind {
            Kind::String => self.tape.string(at).write_unescaped(&mut self.out),
            _ => self.out.push_str(self.tape.scalar_text(at)),
        }
    }

    /// Writes the value at `at`.
    pub(super) fn value(&mut self, at: usize) {
        if !numbered(self.tape, at, self.long) {
            self.scalar(at);
            return;
        }
        if let Some(target) = self.refs.get(at) {
            self.out.push_str("{\"$ref\":");
            parrot_json::write_string(target, &mut self.out);
            self.out.push('}');
            self.nested = true;
            return;
        }
        if !self.tape.nodes[at].is_container() {
            self.scalar(at);
            return;
        }
        self.depth += 1;
        self.container(at);
        self.depth -= 1;
    }

    /// Writes the object or array at `at`.
    fn container(&mut self, at: usize) {
        let tape = self.tape;
        if tape.nodes[at].kind == Kind::Array {
            if self.may_be_rows(at)
                && let Some(table) = self.table(at)
            {
                self.nested |= self.depth > 2;
                self.write_table(at, false, &table);
                return;
            }
            self.out.push('[');
            for (i, item) in tape.children(at).enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.value(item);
            }
            self.out.push(']');
            return;
        }
        if self.keyed_rows(at)
            && let Some(table) = self.table(at)
        {
            // Only this codec writes an object of records as a table.
            self.nested = true;
            self.write_table(at, true, &table);
            return;
        }
        self.out.push('{');
        for (i, member) in tape.children(at).enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            tape.name(member).write_unescaped(&mut self.out);
            self.out.push(':');
            self.value(member);
        }
        self.out.push('}');
    }

    /// Whether the array at `at` may be a table: at least `min_rows` elements, the first an
    /// object.
    fn may_be_rows(&self, at: usize) -> bool {
        self.tables
            && self.tape.nodes.get(at + 1).is_some_and(|first| {
                first.kind == Kind::Object
                    && self.tape.children(at).nth(self.min_rows - 1).is_some()
            })
    }

    /// Whether the object at `at` is an object of records (`{"1.0.0": {…}, "1.0.1": {…}}`): at
    /// least `min_rows` members that are not `null` (the tape has no other), each an object.
    fn keyed_rows(&self, at: usize) -> bool {
        let mut rows = 0;
        self.tables
            && self.tape.children(at).all(|member| {
                rows += 1;
                self.tape.nodes[member].kind == Kind::Object
            })
            && rows >= self.min_rows
    }

    /// The table form of the children of `at`, when they are all objects and the table costs
    /// fewer bytes.
    fn table(&self, at: usize) -> Option<Table<'a>> {
        let tape = self.tape;
        let mut columns = Columns::new();
        // Per column: the rows that have it, the value all of them share so far (a node) and
        // that value's size.
        let mut present: Vec<usize> = Vec::new();
        let mut shared: Vec<Option<usize>> = Vec::new();
        let mut shared_size: Vec<usize> = Vec::new();
        let mut rows = 0;
        let mut names_bytes = 0;
        let mut guess = Vec::new();
        for row in tape.children(at) {
            if tape.nodes[row].kind != Kind::Object {
                return None;
            }
            if self.refs.contains(row) {
                continue;
            }
            rows += 1;
            for (m, member) in tape.children(row).enumerate() {
                let name = tape.name(member);
                names_bytes += name.content().len() + 3;
                let size = tape.nodes[member].size as usize;
                let found = guessed(tape, &columns.first, &guess, m, member)
                    .or_else(|| columns.find(tape, member));
                let column = found.unwrap_or_else(|| {
                    present.push(0);
                    shared.push(Some(member));
                    shared_size.push(size);
                    columns.add(tape, member)
                });
                remember(&mut guess, m, column);
                present[column] += 1;
                if shared[column]
                    .is_some_and(|was| size != shared_size[column] || !tape.same(was, member))
                {
                    shared[column] = None;
                }
            }
        }
        let constant: Vec<Option<usize>> = (0..columns.len())
            .map(|c| shared[c].filter(|_| present[c] == rows && rows > 1))
            .collect();
        // What the table saves: every row's member names and the copies of the constants,
        // less the names said once, a `null` for each cell of a row without that member, and
        // the table's own names (`{"_columns":[],"_rows":[]}`, `,"_constant":{}`).
        let header: usize = columns
            .first
            .iter()
            .map(|&name| tape.name(name).content().len() + 3)
            .sum();
        let missing: usize = (0..columns.len())
            .filter(|&c| constant[c].is_none())
            .map(|c| (rows - present[c]) * 5)
            .sum();
        let hoisted: usize = (0..columns.len())
            .filter(|&c| constant[c].is_some())
            .map(|c| (rows - 1) * (shared_size[c] + 1))
            .sum();
        let own = if constant.iter().any(Option::is_some) {
            25 + 15
        } else {
            25
        };
        let saved = (names_bytes + hoisted).checked_sub(header + missing + own)?;
        (saved > 0 && rows > 0).then_some(Table { columns, constant })
    }

    /// Writes the children of `at` as `table`, their names first when `keyed`.
    fn write_table(&mut self, at: usize, keyed: bool, table: &Table<'_>) {
        let tape = self.tape;
        let varying: Vec<usize> = (0..table.columns.len())
            .filter(|&c| table.constant[c].is_none())
            .collect();
        self.out.push('{');
        if keyed {
            self.out.push_str("\"_keys\":");
            self.names(tape.children(at));
            self.out.push(',');
        }
        self.out.push_str("\"_columns\":");
        self.names(varying.iter().map(|&c| table.columns.first[c]));
        if table.constant.iter().any(Option::is_some) {
            // The constants are written from the first row that is no reference.
            if let Some(row) = tape.children(at).find(|&row| !self.refs.contains(row)) {
                self.write_constant(row, table);
            }
        }
        self.out.push_str(",\"_rows\":[");
        let mut guess = Vec::new();
        for (r, row) in tape.children(at).enumerate() {
            if r > 0 {
                self.out.push(',');
            }
            if self.refs.contains(row) {
                // A row that repeats an earlier value is its reference.
                self.value(row);
            } else {
                self.write_row(row, table, &varying, &mut guess);
            }
        }
        self.out.push_str("]}");
    }

    /// `[name,…]`: the member names of `members`, each written as a string.
    fn names(&mut self, members: impl Iterator<Item = usize>) {
        self.out.push('[');
        for (i, member) in members.enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.tape.name(member).write_unescaped(&mut self.out);
        }
        self.out.push(']');
    }

    /// `,"_constant":{…}`: the constant members of `table`, from the row at `row`.
    fn write_constant(&mut self, row: usize, table: &Table<'_>) {
        let tape = self.tape;
        self.out.push_str(",\"_constant\":{");
        let mut first = true;
        for member in tape.children(row) {
            let name = tape.name(member);
            let column = table.columns.find(tape, member);
            if column.is_none_or(|c| table.constant[c].is_none()) {
                continue;
            }
            if !first {
                self.out.push(',');
            }
            first = false;
            name.write_unescaped(&mut self.out);
            self.out.push(':');
            self.nested |= tape.nodes[member].is_container();
            self.value(member);
        }
        self.out.push('}');
    }

    /// `[cell,…]`: the row at `row`, one cell per varying column of `table`.
    fn write_row(
        &mut self,
        row: usize,
        table: &Table<'_>,
        varying: &[usize],
        guess: &mut Vec<usize>,
    ) {
        let tape = self.tape;
        let mut cells = std::mem::take(&mut self.cells);
        cells.clear();
        cells.resize(table.columns.len(), None);
        for (m, member) in tape.children(row).enumerate() {
            let column = guessed(tape, &table.columns.first, guess, m, member)
                .or_else(|| table.columns.find(tape, member));
            if let Some(c) = column {
                cells[c] = Some(member);
                remember(guess, m, c);
            }
        }
        self.out.push('[');
        for (i, &c) in varying.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            match cells[c] {
                Some(member) => {
                    self.nested |= tape.nodes[member].is_container();
                    self.value(member);
                }
                None => self.out.push_str("null"),
            }
        }
        self.out.push(']');
        self.cells = cells;
    }
}

/// The column of `member`, the member at `position` of a row, when the previous row had a
/// member of that name, as written, at that position (rows mostly list their members in one
/// order): no lookup by decoded name then.
fn guessed(
    tape: &Tape<'_>,
    columns: &[usize],
    guess: &[usize],
    position: usize,
    member: usize,
) -> Option<usize> {
    let column = *guess.get(position)?;
    (tape.name(*columns.get(column)?).content() == tape.name(member).content()).then_some(column)
}

/// Records that the member at `position` was in `column`, for [`guessed`] on the next row.
fn remember(guess: &mut Vec<usize>, position: usize, column: usize) {
    if guess.len() <= position {
        guess.resize(position + 1, usize::MAX);
    }
    guess[position] = column;
}
