//! One payload's compression: classify every line, template the rest, keep what the budget
//! allows by priority, and write the verbatim lines, fold lines and markers.

use std::fmt::Write as _;
use std::hash::BuildHasher as _;

use hashbrown::HashTable;
use parrot_codec_api::RECOVERY_TOOL;

use super::Log;
use super::lines::Lines;
use super::patterns::{Block, Class, Step, is_diagnostic_line, preambles};
use super::template::{REDRAW, estimate_bytes, estimate_tokens, template};
use crate::counted::counted;

/// No template: a failure line (never folded) or a line too long to template.
const NONE: u32 = u32::MAX;

/// The estimated cost of one omission marker, in tokens.
pub(super) const MARKER_TOKENS: usize = 46;

/// The estimated cost of a fold line's `[×N lines A-B] ` and ` ( … )`, beyond its template
/// and values, in tokens.
const FOLD_TOKENS: usize = 12;

/// The lowest effective budget the ratio can give, in estimated tokens (never above
/// `budget_tokens`).
pub(super) const BUDGET_FLOOR: usize = 200;

/// The drop tiers, lowest dropped first; failure lines have no tier (never dropped).
mod tier {
    /// Head and tail lines other than the very first and last.
    pub(super) const FRAME: u8 = 0;
    /// Context lines around failures.
    pub(super) const CONTEXT: u8 = 1;
    /// Fold lines of noise templates.
    pub(super) const NOISE_FOLDS: u8 = 2;
    /// The first and the last line.
    pub(super) const EDGE: u8 = 3;
    /// Fold lines of warning templates: the repeats of each warning.
    pub(super) const WARNING_FOLDS: u8 = 4;
    /// The block of each distinct warning's first occurrence (rustc's `-->`, `|`, `= note`).
    pub(super) const WARNING_BLOCK: u8 = 5;
    /// Status lines (warning summaries, passing packages): the last ordinary lines to go. A
    /// summary counts a unit's warnings, which the warnings' own counts do not, so it outlasts
    /// their repeats and blocks; a distinct warning says what is wrong, so it outlasts them.
    pub(super) const STATUS: u8 = 6;
    /// The first line of each distinct warning, with the line of its count after it: the last
    /// to go, once nothing ordinary is left.
    pub(super) const WARNING: u8 = 7;
}

/// What the budget could not drop to fit: said in every marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Over {
    /// The failure lines alone (with the markers of the regions between them) are over the
    /// budget, and the budget dropped lines for them.
    Failures,
    /// The failure lines fit, and the lines the budget keeps while they alone fit do not fit
    /// with them: the first line of each distinct warning (with its count), the status lines
    /// (warning summaries, passing packages), or both.
    Kept { warnings: bool, summaries: bool },
}

impl Over {
    /// What the markers say, after `; `.
    fn phrase(self) -> &'static str {
        match self {
            Over::Failures => "over budget to keep every failure line",
            Over::Kept {
                warnings: true,
                summaries: false,
            } => "over budget to keep each distinct warning once",
            Over::Kept {
                warnings: false,
                summaries: true,
            } => "over budget to keep each summary line",
            Over::Kept { .. } => "over budget to keep each distinct warning and summary line once",
        }
    }
}

/// A payload's lines after the budget: their classes and tiers, which are kept, and the
/// budget's templates; `untemplated` when the noise lines were not templated (the shortcut:
/// the budget would have dropped every fold line of theirs).
struct Layout<'a> {
    class: &'a [Class],
    tiers: &'a [Option<u8>],
    keep: &'a [bool],
    shape: &'a Shape<'a>,
    untemplated: bool,
}

impl Log {
    /// What keeps a layout that is over `budget` over it, if anything the markers can say:
    ///
    /// - the failure lines, when there are some and every layout that keeps them all is over
    ///   the budget (their
    ///   costs, `line_tokens`, and between them, for each run of other lines, the cheaper of
    ///   a marker and the lines written out: [`floor_cost`]) and the budget dropped a line or
    ///   a fold line for them (a log whose other lines are all too long to keep has nothing
    ///   the budget dropped, and nothing to explain);
    /// - else the lines the budget drops only while they alone are over it, which it keeps:
    ///   the distinct warnings' first lines with their counts, the status lines;
    /// - else nothing: what is left over is markers, and the phrase would say something false.
    fn over(
        &self,
        lines: &Lines<'_>,
        layout: &Layout<'_>,
        line_tokens: &[u32],
        budget: usize,
    ) -> Option<Over> {
        let Layout {
            class,
            tiers,
            keep,
            shape,
            untemplated,
        } = *layout;
        let failure = |i: usize| class[i] == Class::Failure;
        if class.contains(&Class::Failure)
            && floor_cost(lines, failure, line_tokens, budget) > budget
        {
            let dropped = (0..keep.len()).any(|i| {
                let t = shape.tmpl[i];
                !keep[i]
                    && (tiers[i].is_some()
                        || (t != NONE && shape.dropped[t as usize])
                        || (untemplated
                            && class[i] == Class::Noise
                            && lines.get(i).len() <= self.max_line_bytes))
            });
            return dropped.then_some(Over::Failures);
        }
        let kept = |t: u8| (0..keep.len()).any(|i| keep[i] && tiers[i] == Some(t));
        let (warnings, summaries) = (kept(tier::WARNING), kept(tier::STATUS));
        (warnings || summaries).then_some(Over::Kept {
            warnings,
            summaries,
        })
    }
}

/// Each kept line's estimated cost as the budget counts it (0 for the others): its tokens and
/// its line break, and for a warning's first line the line of its count after it.
fn kept_costs(lines: &Lines<'_>, keep: &[bool], notes: &[Note]) -> Vec<u32> {
    let mut costs: Vec<u32> = vec![0; keep.len()];
    for (i, _) in keep.iter().enumerate().filter(|(_, kept)| **kept) {
        costs[i] = estimate_tokens(lines.get(i)) as u32 + 1;
    }
    for note in notes {
        if let Some(marker) = note.marker() {
            costs[note.first as usize] += estimate_tokens(&marker) as u32 + 1;
        }
    }
    costs
}

/// A payload's templates, made class by class: each line's (`NONE` for none), the templates
/// and the buffer of their text.
struct Table {
    templates: Vec<Template>,
    keys: Vec<u8>,
    ids: HashTable<u32>,
    tmpl: Vec<u32>,
}

impl Table {
    fn new(lines: usize) -> Table {
        Table {
            templates: Vec::new(),
            keys: Vec::with_capacity(4096),
            ids: HashTable::new(),
            tmpl: vec![NONE; lines],
        }
    }
}

/// What the budget can drop, one unit at a time.
#[derive(Clone, Copy, Debug)]
enum Unit {
    /// Verbatim lines `start..end` (one line, or the block of a warning's first occurrence).
    Lines(u32, u32),
    /// Every fold line of one template.
    Template(u32),
}

struct Template {
    /// Where its text lies in the buffer of every template's text: a first byte holding its
    /// class, then the template.
    start: u32,
    end: u32,
    /// The text's hash, kept for growing the table.
    hash: u64,
    count: u32,
    /// The estimated cost of one fold line of this template.
    tokens: usize,
}

impl Template {
    /// Its text (its class byte, then the template), in the buffer of every template's text.
    fn key<'k>(&self, keys: &'k [u8]) -> &'k [u8] {
        &keys[self.start as usize..self.end as usize]
    }
}

impl Log {
    /// The compressed text, or `None` when the payload is left as it is (too short, already
    /// compressed by this codec).
    pub(super) fn fold(&self, input: &str, aggressive: bool) -> Option<String> {
        self.fold_with(input, aggressive, true)
    }

    /// [`Log::fold`]; with `shortcut`, the noise lines of a log whose kept lines alone are over
    /// the budget are not templated: the budget would drop every fold line of theirs all the
    /// same (see [`folds_all_dropped`]). The tests compare both ways.
    // long: the fold's stages in their order, each a function of its own (classify, template,
    // tiers, drop to the budget, unfold, the marker's claim, render); what is left here is
    // the tables they share, which a split would pass between its halves.
    pub(super) fn fold_with(
        &self,
        input: &str,
        aggressive: bool,
        shortcut: bool,
    ) -> Option<String> {
        if input.len() >= u32::MAX as usize {
            return None;
        }
        let lines = Lines::new(input, |state| self.matcher.is_failure(state));
        let n = lines.len();
        if n < self.min_lines || n == 0 {
            return None;
        }
        let (class, heads) = self.classify_heads(&lines)?;
        let context = self.context(&class);
        let budget = self.budget(&lines, aggressive);

        // The warnings' templates first: the tiers need them, and the noise's are made only
        // when a fold line of theirs can be kept.
        let mut table = Table::new(n);
        self.template_lines(&lines, &class, Class::Warning, &mut table);
        let notes = warning_notes(&heads, &table.tmpl, table.templates.len());
        let tiers = self.tiers(&lines, &class, &context, &table.tmpl, &heads, &notes);
        let mut keep: Vec<bool> = (0..n)
            .map(|i| class[i] == Class::Failure || tiers[i].is_some())
            .collect();
        let line_tokens = kept_costs(&lines, &keep, &notes);
        let lasting = |i: usize| class[i] == Class::Failure || tiers[i] > Some(tier::NOISE_FOLDS);
        let templated = !(shortcut && folds_all_dropped(&lines, lasting, &line_tokens, budget));
        if templated {
            self.template_lines(&lines, &class, Class::Noise, &mut table);
        }
        let Table {
            templates,
            keys,
            tmpl,
            ..
        } = table;
        let units = units(&tiers, &context, &templates, &keys);

        let mut dropped = vec![false; templates.len()];
        let weights = Weights {
            lines: &lines,
            line_tokens: &line_tokens,
            tiers: &tiers,
        };
        let cost = drop_to(
            budget,
            &units,
            &mut keep,
            &mut dropped,
            (&tmpl, &templates),
            &weights,
        );
        let shape = Shape {
            tmpl: &tmpl,
            dropped: &dropped,
            templates: &templates,
        };
        let slack = budget.saturating_sub(cost);
        let cost = unfold_small(
            &lines,
            &mut keep,
            &shape,
            (cost, slack),
            self.max_line_bytes,
        );
        let over_budget = (cost > budget)
            .then(|| {
                let layout = Layout {
                    class: &class,
                    tiers: &tiers,
                    keep: &keep,
                    shape: &shape,
                    untemplated: !templated,
                };
                self.over(&lines, &layout, &line_tokens, budget)
            })
            .flatten();
        Some(render(
            &lines,
            &keep,
            &shape,
            &keys,
            &notes,
            over_budget,
            input.ends_with('\n'),
        ))
    }

    /// Whether [`Log::fold`] leaves the noise lines of `input` untemplated. For the tests.
    #[cfg(test)]
    pub(super) fn takes_shortcut(&self, input: &str, aggressive: bool) -> bool {
        let lines = Lines::new(input, |state| self.matcher.is_failure(state));
        if lines.len() < self.min_lines {
            return false;
        }
        let Some((class, heads)) = self.classify_heads(&lines) else {
            return false;
        };
        let context = self.context(&class);
        let mut table = Table::new(lines.len());
        self.template_lines(&lines, &class, Class::Warning, &mut table);
        let notes = warning_notes(&heads, &table.tmpl, table.templates.len());
        let tiers = self.tiers(&lines, &class, &context, &table.tmpl, &heads, &notes);
        let keep: Vec<bool> = (0..lines.len())
            .map(|i| class[i] == Class::Failure || tiers[i].is_some())
            .collect();
        let line_tokens = kept_costs(&lines, &keep, &notes);
        let lasting = |i: usize| class[i] == Class::Failure || tiers[i] > Some(tier::NOISE_FOLDS);
        folds_all_dropped(
            &lines,
            lasting,
            &line_tokens,
            self.budget(&lines, aggressive),
        )
    }

    /// Templates the lines of class `of` that are not too long, into `table`. Each template is
    /// written straight into its buffer of every template's text and taken back when it is one
    /// seen before, so a line costs no allocation of its own. Templating the warnings, then
    /// the noise, gives each line the template one pass over both would, and each class's
    /// templates the same order.
    fn template_lines(&self, lines: &Lines<'_>, class: &[Class], of: Class, table: &mut Table) {
        let Table {
            templates,
            keys,
            ids,
            tmpl,
        } = table;
        let hasher = foldhash::fast::FixedState::default();
        for i in 0..lines.len() {
            let line = lines.get(i);
            if class[i] != of || line.len() > self.max_line_bytes {
                continue;
            }
            let at = keys.len();
            keys.push(of as u8);
            let first = template(line, keys);
            let (seen, key) = keys.split_at(at);
            let hash = hasher.hash_one(key);
            let found = ids.find(hash, |&id| templates[id as usize].key(seen) == key);
            let id = match found {
                Some(&id) => {
                    keys.truncate(at);
                    id
                }
                None => {
                    let id = templates.len() as u32;
                    let value = first.map_or(0, |(s, e)| estimate_tokens(&line[s..e]));
                    templates.push(Template {
                        start: at as u32,
                        end: keys.len() as u32,
                        hash,
                        count: 0,
                        tokens: estimate_bytes(&keys[at + 1..]) + FOLD_TOKENS + 2 * value,
                    });
                    ids.insert_unique(hash, id, |&id| templates[id as usize].hash);
                    id
                }
            };
            templates[id as usize].count += 1;
            tmpl[i] = id;
        }
    }

    /// Each line's drop tier (`None`: not verbatim; failures kept outside the tiers).
    fn tiers(
        &self,
        lines: &Lines<'_>,
        class: &[Class],
        context: &[u32],
        tmpl: &[u32],
        heads: &[bool],
        notes: &[Note],
    ) -> Vec<Option<u8>> {
        let n = lines.len();
        let mut tiers: Vec<Option<u8>> = vec![None; n];
        let mut notes = notes.iter().peekable();
        // Whether the line is in the block of a warning's first occurrence.
        let mut first_block = false;
        for i in 0..n {
            if class[i] == Class::Failure {
                first_block = false;
                continue;
            }
            let mut best: Option<u8> = None;
            let mut raise = |t: u8| best = Some(best.map_or(t, |b: u8| b.max(t)));
            let (from_top, from_end) = (i, n - 1 - i);
            let framed = from_top < self.head_lines || from_end < self.tail_lines;
            // The length last: most lines are neither frame nor context.
            if (framed || context[i] != 0) && lines.get(i).len() <= self.max_line_bytes {
                if framed {
                    raise(if from_top == 0 || from_end == 0 {
                        tier::EDGE
                    } else {
                        tier::FRAME
                    });
                }
                if context[i] != 0 {
                    raise(tier::CONTEXT);
                }
            }
            // The first occurrence of each distinct warning, and its block's lines.
            if class[i] == Class::Status {
                first_block = false;
                if lines.get(i).len() <= self.max_line_bytes {
                    raise(tier::STATUS);
                }
            } else if heads[i] {
                first_block = notes.next_if(|note| note.first as usize == i).is_some();
                if first_block {
                    raise(tier::WARNING);
                }
            } else if first_block && class[i] == Class::Warning && tmpl[i] != NONE {
                raise(tier::WARNING_BLOCK);
            } else {
                first_block = false;
            }
            tiers[i] = best;
        }
        tiers
    }

    /// Each line's class (after cleaning), for the tests; `None` as for [`Log::classify`].
    #[cfg(test)]
    pub(super) fn classes(&self, input: &str) -> Option<Vec<Class>> {
        self.classify(&Lines::new(input, |state| self.matcher.is_failure(state)))
    }

    /// Each line's class, from the table and the blocks; `None` when the text holds a line
    /// this codec writes (a fold line or a marker) or one that looks like it
    /// ([`looks_like_own_line`]): it is compressed already, or would read as if it were.
    pub(super) fn classify(&self, lines: &Lines<'_>) -> Option<Vec<Class>> {
        self.classify_heads(lines).map(|(class, _)| class)
    }

    /// [`Log::classify`], and which lines are the first line of a warning: a warning row
    /// matched on the line itself (not a line of a warning's block, not a diagnostic line).
    fn classify_heads(&self, lines: &Lines<'_>) -> Option<(Vec<Class>, Vec<bool>)> {
        let hits = self.matcher.scan(lines);
        let mut heads = vec![false; lines.len()];
        let mut class = Vec::with_capacity(lines.len());
        let mut block: Option<(Block, Class)> = None;
        let mut redrawn = lines.redrawn().iter().peekable();
        for (i, hit) in hits.iter().enumerate() {
            let line = lines.get(i);
            if looks_like_own_line(line) {
                return None;
            }
            let mut own = hit.map_or(Class::Noise, |hit| hit.class);
            if redrawn.next_if(|&&at| at as usize == i).is_some() {
                // A failure a redraw overwrote: its state starts the line, the others follow
                // a `␍`, and each is held to the same rule as a line of its own.
                if line.split(REDRAW).skip(1).any(looks_like_own_line) {
                    return None;
                }
                own = Class::Failure;
            }
            let mut head = hit.map(|hit| hit.block).filter(|b| *b != Block::None);
            if let Some((kind, inherited)) = block {
                let next = (i + 1 < lines.len()).then(|| lines.get(i + 1));
                let Step {
                    belongs,
                    ends,
                    becomes,
                } = kind.step(line, next);
                if belongs {
                    own = own.max(inherited);
                }
                if ends {
                    block = None;
                } else if belongs {
                    // Inside a block that goes on, a nested head does not replace it.
                    head = None;
                    if let Some(kind) = becomes {
                        block = Some((kind, inherited));
                    }
                }
            }
            if let Some(kind) = head {
                block = Some((kind, own));
            }
            heads[i] = own == Class::Warning
                && hit.is_some_and(|hit| hit.class == Class::Warning)
                && !is_diagnostic_line(line);
            class.push(own);
        }
        preambles(|i| lines.get(i), &mut class);
        Some((class, heads))
    }

    /// For each line, its distance to the nearest failure line when it is context of one
    /// (`1..`), else 0.
    fn context(&self, class: &[Class]) -> Vec<u32> {
        let n = class.len();
        let mut context = vec![0u32; n];
        let mut last_failure: Option<usize> = None;
        for i in 0..n {
            if class[i] == Class::Failure {
                last_failure = Some(i);
            } else if let Some(f) = last_failure
                && i - f <= self.context_after
            {
                context[i] = (i - f) as u32;
            }
        }
        let mut next_failure: Option<usize> = None;
        for i in (0..n).rev() {
            if class[i] == Class::Failure {
                next_failure = Some(i);
            } else if let Some(f) = next_failure
                && f - i <= self.context_before
            {
                let d = (f - i) as u32;
                if context[i] == 0 || d < context[i] {
                    context[i] = d;
                }
            }
        }
        context
    }

    /// The effective budget in estimated tokens.
    ///
    /// The input's estimate is summed line by line (a line break is one token and ends every
    /// run, so the sum is the whole text's estimate) and stops once the ratio alone reaches
    /// `budget_tokens`: a partial sum never exceeds the whole, so the rest cannot change the
    /// result, and a large log is not estimated in full.
    pub(super) fn budget(&self, lines: &Lines<'_>, aggressive: bool) -> usize {
        let breaks = lines.text().len() - lines.bounds().1[lines.len() - 1] as usize;
        let mut estimate = 0usize;
        for i in 0..lines.len() {
            // Every line but the last is followed by a line break; the last one is when the
            // text ends with one.
            let newline = if i + 1 < lines.len() { 1 } else { breaks };
            estimate += estimate_tokens(lines.get(i)) + newline;
            if (estimate as f64 * self.budget_ratio) as usize >= self.budget_tokens {
                break;
            }
        }
        let relative = (estimate as f64 * self.budget_ratio) as usize;
        let budget = relative.max(BUDGET_FLOOR).min(self.budget_tokens);
        if aggressive { budget / 2 } else { budget }
    }
}

/// Whether the budget drops every fold line of the noise, whatever the noise's templates: the
/// lines it keeps until it has dropped them (`lasting`: the failure lines, and those of the
/// tiers after the noise folds) are already over `budget` on their own.
///
/// Every layout the budget walks through until then keeps those lines and costs at least
/// [`floor_cost`] of them. When that bound is over the budget, no such layout fits, and the
/// budget, which stops only when the cost fits, goes on past the last noise fold: so the
/// noise's templates need not be made.
fn folds_all_dropped(
    lines: &Lines<'_>,
    lasting: impl Fn(usize) -> bool,
    line_tokens: &[u32],
    budget: usize,
) -> bool {
    floor_cost(lines, lasting, line_tokens, budget) > budget
}

/// The least any layout that keeps the lines `kept` costs: their costs (`line_tokens`), and for
/// each run of other lines between them either a marker (when a line of the run is not kept)
/// or the run's lines themselves (when every one is), so at least the smaller of the two.
/// Stops summing once over `limit`.
fn floor_cost(
    lines: &Lines<'_>,
    kept: impl Fn(usize) -> bool,
    line_tokens: &[u32],
    limit: usize,
) -> usize {
    let n = line_tokens.len();
    let mut bound = 0usize;
    let mut i = 0;
    while i < n {
        if kept(i) {
            bound += line_tokens[i] as usize;
            i += 1;
        } else {
            // The run's lines written out, counted only up to a marker's cost.
            let mut run = 0;
            while i < n && !kept(i) {
                if run < MARKER_TOKENS {
                    run += estimate_tokens(lines.get(i)) + 1;
                }
                i += 1;
            }
            bound += run.min(MARKER_TOKENS);
        }
        if bound > limit {
            break;
        }
    }
    bound
}

/// What the budget can drop, in the order it drops them: verbatim lines (the block of a
/// warning's first occurrence as one unit) and each template's fold lines, lowest tier first.
fn units(
    tiers: &[Option<u8>],
    context: &[u32],
    templates: &[Template],
    keys: &[u8],
) -> Vec<(u8, u64, Unit)> {
    let n = tiers.len();
    let mut units: Vec<(u8, u64, Unit)> = Vec::new();
    let mut i = 0;
    while i < n {
        let Some(t) = tiers[i] else {
            i += 1;
            continue;
        };
        let mut end = i + 1;
        if t == tier::WARNING_BLOCK {
            while end < n && tiers[end] == Some(tier::WARNING_BLOCK) {
                end += 1;
            }
        }
        let order = match t {
            tier::FRAME => {
                let dist = i.min(n - 1 - i) as u64;
                u64::MAX - dist
            }
            tier::CONTEXT => u64::MAX - u64::from(context[i]),
            // Later warnings and status lines go first.
            tier::WARNING | tier::WARNING_BLOCK | tier::STATUS => u64::MAX - i as u64,
            _ => i as u64,
        };
        units.push((t, order, Unit::Lines(i as u32, end as u32)));
        i = end;
    }
    for (id, template) in templates.iter().enumerate() {
        let t = if keys[template.start as usize] == Class::Warning as u8 {
            tier::WARNING_FOLDS
        } else {
            tier::NOISE_FOLDS
        };
        units.push((t, u64::from(template.count), Unit::Template(id as u32)));
    }
    units.sort_by_key(|&(t, order, _)| (t, order));
    units
}

/// What the budget weighs a layout by: the lines, each kept line's cost (`line_tokens`, see
/// [`kept_costs`]) and each line's tier.
struct Weights<'a> {
    lines: &'a Lines<'a>,
    line_tokens: &'a [u32],
    tiers: &'a [Option<u8>],
}

impl Weights<'_> {
    /// The least a layout that keeps only the protected lines of `keep` (the status lines and
    /// the distinct warnings' first lines) costs: see [`floor_cost`].
    fn protected_floor(&self, keep: &[bool], limit: usize) -> usize {
        let protected = |i: usize| keep[i] && self.tiers[i] >= Some(tier::STATUS);
        floor_cost(self.lines, protected, self.line_tokens, limit)
    }
}

/// Drops `units` in order, as many at a time as the cost over `budget` needs (within one tier),
/// until the layout fits or nothing is left to drop; returns the layout's cost. The status
/// lines and then the first lines of the distinct warnings (the last two tiers) go only while
/// they alone, with their counts and the markers between them, cost more than the budget: so
/// those the budget keeps never take more than the budget, and the failure lines being over
/// it never takes them all.
fn drop_to(
    budget: usize,
    units: &[(u8, u64, Unit)],
    keep: &mut [bool],
    dropped: &mut [bool],
    (tmpl, templates): (&[u32], &[Template]),
    weights: &Weights<'_>,
) -> usize {
    let line_tokens = weights.line_tokens;
    let lines_cost = |start: u32, end: u32| -> usize {
        (start..end).map(|j| line_tokens[j as usize] as usize).sum()
    };
    let mut stamp = vec![0u32; templates.len()];
    let mut cost = layout_cost(keep, tmpl, dropped, templates, line_tokens, &mut stamp);
    let mut next = 0;
    while cost > budget && next < units.len() {
        // A batch stays within one tier: a template's fold lines in several regions save more
        // than its estimate, and a batch that ran on past its tier would drop what a higher
        // tier keeps (a distinct warning's first line) for room it already has.
        let batch_tier = units[next].0;
        let protected = batch_tier >= tier::STATUS;
        let need = if protected {
            let floor = weights.protected_floor(keep, budget);
            if floor <= budget {
                break;
            }
            (cost - budget).min(floor - budget)
        } else {
            cost - budget
        };
        let mut saved = 0;
        while next < units.len() && saved < need && units[next].0 == batch_tier {
            match units[next].2 {
                Unit::Lines(start, end) => {
                    keep[start as usize..end as usize].fill(false);
                    saved += lines_cost(start, end);
                    // A protected line dropped between two regions joins them: at most a
                    // marker more is saved. Counting it keeps a batch from dropping more
                    // protected lines than the room needs; the next batch drops the rest.
                    if protected {
                        saved += MARKER_TOKENS;
                    }
                }
                Unit::Template(id) => {
                    dropped[id as usize] = true;
                    saved += templates[id as usize].tokens;
                }
            }
            next += 1;
        }
        cost = layout_cost(keep, tmpl, dropped, templates, line_tokens, &mut stamp);
    }
    cost
}

fn layout_cost(
    keep: &[bool],
    tmpl: &[u32],
    dropped: &[bool],
    templates: &[Template],
    line_tokens: &[u32],
    stamp: &mut [u32],
) -> usize {
    stamp.fill(0);
    let mut cost = 0;
    let mut region = 0u32;
    let mut in_region = false;
    for i in 0..keep.len() {
        if keep[i] {
            cost += line_tokens[i] as usize;
            in_region = false;
            continue;
        }
        if !in_region {
            in_region = true;
            region += 1;
            cost += MARKER_TOKENS;
        }
        let t = tmpl[i];
        if t != NONE && !dropped[t as usize] && stamp[t as usize] != region {
            stamp[t as usize] = region;
            cost += templates[t as usize].tokens;
        }
    }
    cost
}

/// What the budget decided about templates, for [`unfold_small`] and [`render`].
struct Shape<'a> {
    tmpl: &'a [u32],
    dropped: &'a [bool],
    templates: &'a [Template],
}

/// Writes verbatim what costs more folded than written out, after the budget: a region whose
/// lines cost no more than its marker and fold lines (a blank line between two kept lines),
/// and a line at a region's edge that would be its fold line's only line (`[×1 lines 710-710]
/// Node.js v20.4.3`) when the line costs no more than the fold line, or the budget has room
/// for the difference. A single-line fold inside a region stays: written verbatim, it would
/// split the region and cost a marker more. `cost` is what the layout costs before, and what
/// it costs after is returned.
fn unfold_small(
    lines: &Lines<'_>,
    keep: &mut [bool],
    shape: &Shape<'_>,
    (mut cost, mut slack): (usize, usize),
    max_line_bytes: usize,
) -> usize {
    let Shape {
        tmpl,
        dropped,
        templates,
    } = *shape;
    let n = keep.len();
    let folded = |i: usize| tmpl[i] != NONE && !dropped[tmpl[i] as usize];
    let line_cost = |i: usize| estimate_tokens(lines.get(i)) + 1;
    // Per template: the region it was last counted in, and its count there.
    let mut seen: Vec<(u32, u32)> = vec![(0, 0); templates.len()];
    let mut region = 0u32;
    let mut i = 0;
    while i < n {
        if keep[i] {
            i += 1;
            continue;
        }
        region += 1;
        let start = i;
        let mut folds = 0;
        while i < n && !keep[i] {
            if folded(i) {
                let t = tmpl[i] as usize;
                if seen[t].0 != region {
                    seen[t] = (region, 0);
                    folds += templates[t].tokens;
                }
                seen[t].1 += 1;
            }
            i += 1;
        }
        let (mut a, mut b) = (start, i);
        // Whether every line is short is asked only of a region that would be written out.
        let short = |range: std::ops::Range<usize>| {
            range
                .into_iter()
                .all(|j| lines.get(j).len() <= max_line_bytes)
        };
        if let Some(written) = verbatim_within(a..b, line_cost, MARKER_TOKENS + folds)
            && short(a..b)
        {
            keep[a..b].fill(true);
            cost = cost + written - (MARKER_TOKENS + folds);
            continue;
        }
        let mut unfold = |j: usize| {
            if !folded(j) || seen[tmpl[j] as usize].1 != 1 {
                return false;
            }
            let fold = templates[tmpl[j] as usize].tokens;
            let line = line_cost(j);
            if line > fold + slack {
                return false;
            }
            slack = slack + fold - line;
            cost = cost + line - fold;
            keep[j] = true;
            true
        };
        while a < b && unfold(a) {
            a += 1;
        }
        while b > a && unfold(b - 1) {
            b -= 1;
        }
        if a == b {
            // Every line of the region is written out: its marker goes too.
            cost -= MARKER_TOKENS;
        }
    }
    cost
}

/// What the lines `range` cost written verbatim, when that is at most `limit`; stops counting
/// past it, so a long region costs a few lines' estimates, not all of them.
fn verbatim_within(
    range: std::ops::Range<usize>,
    cost: impl Fn(usize) -> usize,
    limit: usize,
) -> Option<usize> {
    let mut sum = 0;
    for j in range {
        sum += cost(j);
        if sum > limit {
            return None;
        }
    }
    Some(sum)
}

/// A distinct warning with repeats: its template's first line, how many lines have it, and the
/// last of them (0-based). Written after the first line when that line is kept:
/// `[×N warnings like this, lines A-B; wm_get_result {"lines":"A-B"}]`.
pub(super) struct Note {
    pub(super) first: u32,
    count: u32,
    last: u32,
}

impl Note {
    /// The line written after the warning's first occurrence; `None` for a warning that does
    /// not repeat.
    pub(super) fn marker(&self) -> Option<String> {
        let (a, b) = (self.first + 1, self.last + 1);
        (self.count > 1).then(|| {
            format!(
                "[\u{d7}{} warnings like this, lines {a}-{b}; {RECOVERY_TOOL} {{\"lines\":\"{a}-{b}\"}}]",
                self.count
            )
        })
    }
}

/// The distinct warnings that repeat, in the order of their first line: for each template of
/// a warning's first line (`heads`), the lines that have it.
fn warning_notes(heads: &[bool], tmpl: &[u32], templates: usize) -> Vec<Note> {
    // Per template: the index of its note, or NONE.
    let mut slot = vec![NONE; templates];
    let mut notes: Vec<Note> = Vec::new();
    for (i, &head) in heads.iter().enumerate() {
        let t = tmpl[i];
        if !head || t == NONE {
            continue;
        }
        match slot[t as usize] {
            NONE => {
                slot[t as usize] = notes.len() as u32;
                notes.push(Note {
                    first: i as u32,
                    count: 1,
                    last: i as u32,
                });
            }
            at => {
                let note = &mut notes[at as usize];
                note.count += 1;
                note.last = i as u32;
            }
        }
    }
    notes
}

/// One template's lines in one region.
struct Group {
    template: u32,
    count: usize,
    first: usize,
    last: usize,
    /// Whether every line is the first one, byte for byte.
    same: bool,
}

/// Groups the lines of the region of dropped lines that starts at `start` (numbered `region`)
/// by template, into `groups` (each template's group in `slot`), in the order first seen;
/// returns where the region ends and how many of its lines are omitted (no template, or a
/// dropped one).
fn group_region(
    lines: &Lines<'_>,
    keep: &[bool],
    shape: &Shape<'_>,
    start: usize,
    region: u32,
    slot: &mut [(u32, u32)],
    groups: &mut Vec<Group>,
) -> (usize, usize) {
    let Shape { tmpl, dropped, .. } = *shape;
    let n = lines.len();
    groups.clear();
    let mut i = start;
    let mut omitted = 0usize;
    while i < n && !keep[i] {
        let t = tmpl[i];
        if t == NONE || dropped[t as usize] {
            omitted += 1;
        } else {
            let (seen, at) = slot[t as usize];
            if seen == region {
                let group = &mut groups[at as usize];
                group.same = group.same && lines.get(i) == lines.get(group.first);
                group.count += 1;
                group.last = i;
            } else {
                slot[t as usize] = (region, groups.len() as u32);
                groups.push(Group {
                    template: t,
                    count: 1,
                    first: i,
                    last: i,
                    same: true,
                });
            }
        }
        i += 1;
    }
    (i, omitted)
}

fn render(
    lines: &Lines<'_>,
    keep: &[bool],
    shape: &Shape<'_>,
    keys: &[u8],
    notes: &[Note],
    over_budget: Option<Over>,
    final_newline: bool,
) -> String {
    let mut notes = notes.iter().peekable();
    let templates = shape.templates;
    let n = lines.len();
    let mut out = String::with_capacity(4096);
    let mut slot: Vec<(u32, u32)> = vec![(0, 0); templates.len()];
    let mut groups: Vec<Group> = Vec::new();
    let mut scratch = Vec::new();
    let mut region = 0u32;
    let mut i = 0;
    while i < n {
        if keep[i] {
            out.push_str(lines.get(i));
            out.push('\n');
            if let Some(note) = notes.next_if(|note| note.first as usize <= i)
                && note.first as usize == i
                && let Some(marker) = note.marker()
            {
                out.push_str(&marker);
                out.push('\n');
            }
            i += 1;
            continue;
        }
        while notes.next_if(|note| (note.first as usize) < i).is_some() {}
        region += 1;
        let start = i;
        let (end, omitted) =
            group_region(lines, keep, shape, start, region, &mut slot, &mut groups);
        i = end;
        for group in &groups {
            let _ = write!(
                out,
                "[\u{d7}{} {}-{}] ",
                counted(group.count, "line", "lines"),
                group.first + 1,
                group.last + 1
            );
            let first = lines.get(group.first);
            if group.same {
                out.push_str(first);
            } else {
                let key = templates[group.template as usize].key(keys);
                out.push_str(std::str::from_utf8(&key[1..]).unwrap_or(first));
                scratch.clear();
                let from = template(first, &mut scratch);
                scratch.clear();
                let last = lines.get(group.last);
                let to = template(last, &mut scratch);
                if let (Some((a, b)), Some((c, d))) = (from, to) {
                    let _ = write!(out, " ({} \u{2026} {})", &first[a..b], &last[c..d]);
                }
            }
            out.push('\n');
        }
        write_marker(&mut out, start..i, omitted, over_budget);
    }
    if !final_newline {
        out.pop();
    }
    out
}

/// Writes the marker closing the region `region` (0-based lines) of which `omitted` lines
/// appear nowhere, the others in the fold lines above it.
fn write_marker(
    out: &mut String,
    region: std::ops::Range<usize>,
    omitted: usize,
    over_budget: Option<Over>,
) {
    let (start, i) = (region.start, region.end);
    let folded = i - start - omitted;
    let _ = write!(
        out,
        "[\u{2026} {} omitted, lines {}-{}: {folded} folded above; 0 failure lines omitted",
        counted(omitted, "line", "lines"),
        start + 1,
        i
    );
    if let Some(over) = over_budget {
        out.push_str("; ");
        out.push_str(over.phrase());
    }
    // The selector that returns exactly this region of the original (`recover --lines`,
    // the recovery tool's `lines`).
    let _ = writeln!(
        out,
        "; {RECOVERY_TOOL} {{\"lines\":\"{}-{}\"}}]",
        start + 1,
        i
    );
}

/// Whether `line` is a fold line or a marker of this codec, `[×N lines A-B] …` or
/// `[… N lines omitted, lines A-B…`, or looks like one to a reader: what a reader sees at its
/// start is compared, so the codec takes a lookalike as it takes its own line (the payload is
/// left unchanged) and never writes real markers beside a forged one.
///
/// What is compared: the line's characters with whitespace, control and invisible characters
/// (zero-width spaces and joiners, the byte order mark, bidirectional marks, variation
/// selectors, soft hyphens) skipped, fullwidth forms read as ASCII, ASCII letters in either
/// case, and each of these families read as one: opening brackets (`[`, `［`, `⟦`, `【`, `〔` …),
/// multiplication signs (`×`, `x`, `X`, `✕`, `✖`, `⨯`, `*`, Cyrillic `х` …), ellipses (`…`, `.`,
/// `⋯`, `‥`, `·` …), dashes (`-`, `‐`, `–`, `—`, `−`, `~` …), digits (any numeric character, with
/// `,` `_` `'` `.` between them) and the Cyrillic letters that look like Latin ones
/// (`е`, `і`, `о`, `ѕ` …). In those terms a line is one of its own when it starts with a
/// bracket, any run of signs and ellipses, a number, `line` or `lines`, optionally `omitted`,
/// punctuation and `line`/`lines` again, then a range `A-B`: `[x4000 lines 1-4000]x`,
/// ` [×4000 lines 1-4000] x`, `[... 3 lines omitted, lines 1-3`, `［×4000 lines 1-4000] x`.
/// Lines that start otherwise cost one look at their first byte; indented lines, a look past
/// their indentation.
pub(super) fn looks_like_own_line(line: &str) -> bool {
    // Most lines are told apart by their first byte after an ASCII indentation: not a
    // bracket, not a control or non-ASCII byte that could hide one.
    let bytes = line.as_bytes();
    let indent = bytes
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(bytes.len());
    let Some(&first) = bytes.get(indent) else {
        return false;
    };
    if first != b'[' && first > b' ' && first < 0x80 {
        return false;
    }
    // `[INFO]`, `[ok]`: a bracket and an ASCII character that is no sign, digit or space.
    if first == b'['
        && bytes.get(indent + 1).is_some_and(|&b| {
            b > b' ' && b < 0x80 && !b.is_ascii_digit() && !matches!(b, b'x' | b'X' | b'*' | b'.')
        })
    {
        return false;
    }
    let mut seen = Seen::new(&line[indent..]);
    if seen.next() != Some('[') {
        return false;
    }
    while seen.next_if(|c| c == 'x' || c == '.').is_some() {}
    if !seen.number() {
        return false;
    }
    if seen.word("warning") {
        // The count of a warning's repeats: `[×164 warnings like this, lines 3-900; …`.
        seen.next_if(|c| c == 's');
        let mut like = seen.clone();
        if like.word("likethis") {
            seen = like;
        }
        while seen.next_if(|c| matches!(c, ',' | ':' | ';')).is_some() {}
        return seen.lines() && seen.number() && seen.next() == Some('-') && seen.number();
    }
    if !seen.lines() {
        return false;
    }
    if seen.word("omitted") {
        while seen.next_if(|c| matches!(c, ',' | ':' | ';')).is_some() {}
        if !seen.lines() {
            return false;
        }
    }
    seen.number() && seen.next() == Some('-') && seen.number()
}

/// The characters a reader sees in a line, one family at a time: see [`looks_like_own_line`].
#[derive(Clone)]
struct Seen<'a> {
    chars: std::str::Chars<'a>,
    peeked: Option<Option<char>>,
}

impl<'a> Seen<'a> {
    fn new(line: &'a str) -> Seen<'a> {
        Seen {
            chars: line.chars(),
            peeked: None,
        }
    }

    fn next(&mut self) -> Option<char> {
        if let Some(peeked) = self.peeked.take() {
            return peeked;
        }
        self.chars.find(|&c| !invisible(c)).map(seen_as)
    }

    fn next_if(&mut self, want: impl Fn(char) -> bool) -> Option<char> {
        let c = self.next();
        if c.is_some_and(&want) {
            c
        } else {
            self.peeked = Some(c);
            None
        }
    }

    /// A number: digits, with separators between them.
    fn number(&mut self) -> bool {
        if self.next_if(char::is_numeric).is_none() {
            return false;
        }
        while self
            .next_if(|c| c.is_numeric() || matches!(c, ',' | '_' | '\'' | '.'))
            .is_some()
        {}
        true
    }

    /// `word`, whose letters are ASCII lowercase.
    fn word(&mut self, word: &str) -> bool {
        word.chars()
            .all(|want| self.next_if(|c| c == want).is_some())
    }

    /// `line` or `lines`.
    fn lines(&mut self) -> bool {
        let found = self.word("line");
        self.next_if(|c| c == 's');
        found
    }
}

/// Whether a reader would not see `c` at all between the characters of a marker.
fn invisible(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(c,
            '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
            | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}'
            | '\u{ffa0}' | '\u{e0000}'..='\u{e007f}' | '\u{e0100}'..='\u{e01ef}')
}

/// The character a reader takes `c` for, among those a marker is written with: see
/// [`looks_like_own_line`].
fn seen_as(c: char) -> char {
    let c = match u32::from(c) {
        fullwidth @ 0xff01..=0xff5e => char::from_u32(fullwidth - 0xfee0).unwrap_or(c),
        _ => c,
    };
    match c {
        '\u{27e6}' | '\u{3010}' | '\u{3014}' | '\u{3016}' | '\u{3018}' | '\u{301a}'
        | '\u{2045}' | '\u{2772}' | '\u{fe5d}' | '\u{298b}' => '[',
        '\u{d7}' | '\u{2715}' | '\u{2716}' | '\u{2a2f}' | '\u{2a09}' | '\u{2573}' | '\u{445}'
        | '\u{425}' | '\u{2179}' | '\u{2169}' | '*' | '\u{2217}' => 'x',
        '\u{2026}' | '\u{22ef}' | '\u{2025}' | '\u{b7}' | '\u{ff65}' | '\u{fe52}' | '\u{3002}'
        | '\u{2e31}' | '\u{2024}' => '.',
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' | '\u{fe63}' | '~' | '\u{301c}' => '-',
        '\u{430}' => 'a',
        '\u{435}' => 'e',
        '\u{456}' | '\u{131}' | '\u{2170}' => 'i',
        '\u{43e}' => 'o',
        '\u{455}' => 's',
        '\u{501}' => 'd',
        '\u{4cf}' | '\u{217c}' | '\u{2113}' => 'l',
        '\u{442}' => 't',
        _ => c.to_ascii_lowercase(),
    }
}
