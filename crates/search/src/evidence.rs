//! Lexical evidence that a hit answers a query, on no embedder's scale: the share of the
//! query's term weight that the hit's section holds. Terms are weighed by their rarity in the
//! index (BM25's IDF), and a term no section uses weighs the most, so a prompt about something
//! the documents never mention ("Keycloak", "Dendrite") keeps a low coverage however close
//! its embedding lands to the corpus's topic.
//!
//! The dense side is put on a scale of its own by [`crate::calibration`].
//!
//! Reads the index's term statistics and vectors; ranks nothing and decides nothing (the
//! hook's gate does).

use std::collections::HashSet;

use ragdown_index::{Index, Snapshot, TermFrequencies};

use crate::SearchError;

/// The BM25 inverse document frequency of a term held by `chunks` of `total` chunks.
fn idf(chunks: u64, total: u64) -> f32 {
    let (n, df) = (total as f32, chunks as f32);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The query's analysed terms with their weights; empty when nothing in it is a term.
#[derive(Debug, Clone, Default)]
pub struct QueryTerms {
    terms: Vec<(String, f32)>,
    total: f32,
}

impl QueryTerms {
    pub fn new(frequencies: &TermFrequencies) -> Self {
        let terms: Vec<(String, f32)> = frequencies
            .terms
            .iter()
            .map(|(term, chunks)| (term.clone(), idf(*chunks, frequencies.chunks)))
            .collect();
        let total = terms.iter().map(|(_, w)| w).sum();
        Self { terms, total }
    }

    pub fn read(index: &Index, query: &str) -> Self {
        // Without term statistics there is no evidence either way: coverage 0 everywhere.
        index
            .term_frequencies(query)
            .map(|f| Self::new(&f))
            .unwrap_or_default()
    }

    /// Share (0–1) of the weight of the terms that no section holds.
    pub fn unknown(&self, frequencies: &TermFrequencies) -> f32 {
        let missing: f32 = frequencies
            .terms
            .iter()
            .zip(&self.terms)
            .filter(|((_, chunks), _)| *chunks == 0)
            .map(|(_, (_, w))| w)
            .sum();
        missing / self.total.max(f32::EPSILON)
    }

    /// Share (0–1) of the query's term weight among `held` terms.
    pub fn coverage(&self, held: &HashSet<String>) -> f32 {
        if self.total <= 0.0 {
            return 0.0;
        }
        let covered: f32 = self
            .terms
            .iter()
            .filter(|(term, _)| held.contains(term))
            .map(|(_, w)| w)
            .sum();
        covered / self.total
    }
}

/// The distinct terms a section's headings (`breadcrumb`) and text hold, as BM25 analyses
/// them: what a query's coverage of the section itself is measured against, its document's
/// title and aliases left out.
pub fn section_terms(index: &Index, breadcrumb: &str, text: &str) -> HashSet<String> {
    index.term_set(&format!("{breadcrumb}\n{text}"))
}

/// The share (0–1) of `names` — a query's names written as code, lowercased
/// ([`crate::route::code_names`]) — that a section's headings (`breadcrumb`) and text hold
/// word for word, in any case; 0 when there are none.
pub fn code_name_share(names: &[String], breadcrumb: &str, text: &str) -> f32 {
    if names.is_empty() {
        return 0.0;
    }
    let section = format!("{breadcrumb}\n{text}").to_lowercase();
    let held = names
        .iter()
        .filter(|n| section.contains(n.as_str()))
        .count();
    held as f32 / names.len() as f32
}

/// The words `prompt` writes as proper names: capitalised where a sentence does not start
/// (`Dendrite`, `Kubernetes`, `MUC`), each once, possessives and contractions cut (`Google's`
/// → `Google`; the pronoun `I` is no name). Plain words, numbers and a sentence's first word
/// are left out, since their capital says nothing — and so is every word of a prompt where
/// more than [`MOST_CAPITALISED`] of the words inside sentences are capitalised: in German
/// every noun is, and a Title Case prompt capitalises everything. A name the prompt opens by
/// addressing ("Hey Claude, …", "Thanks Sam,") is whom it speaks to, not what it asks about.
pub fn proper_names(prompt: &str) -> Vec<String> {
    capitalised_names(prompt).0
}

/// The names of two or more capitalised words in a row that `prompt` writes inside a sentence
/// (`Element X`, `Quill Blobstore`), each once, read as [`proper_names`] reads single ones; a
/// word of one letter may be part of one (not the pronoun `I`). A possessive or a punctuation
/// mark ends one.
pub fn compound_names(prompt: &str) -> Vec<String> {
    capitalised_names(prompt).1
}

/// [`proper_names`] and [`compound_names`], read in one pass.
fn capitalised_names(prompt: &str) -> (Vec<String>, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    let mut compounds: Vec<String> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let mut end_run = |run: &mut Vec<&str>| {
        if run.len() >= 2 {
            let compound = run.join(" ");
            if !compounds.contains(&compound) {
                compounds.push(compound);
            }
        }
        run.clear();
    };
    let mut inner_words = 0usize;
    let mut opens_sentence = true;
    for (place, token) in prompt.split_whitespace().enumerate() {
        let addressed = place == 1 && token.ends_with(',');
        let trimmed = token.trim_matches(|c: char| !c.is_alphanumeric());
        let word = trimmed.split(['\'', '\u{2019}']).next().unwrap_or("");
        let capitalised = word.chars().next().is_some_and(char::is_uppercase);
        if !opens_sentence && word.chars().next().is_some_and(char::is_alphabetic) {
            inner_words += 1;
            if capitalised
                && !addressed
                && word.chars().count() >= 2
                && !names.iter().any(|n| n == word)
            {
                names.push(word.to_string());
            }
        }
        if capitalised && !opens_sentence && !addressed && word != "I" {
            run.push(word);
        } else {
            end_run(&mut run);
        }
        // A possessive or a mark after the word ends a compound name there.
        if word.len() < trimmed.len() || !token.ends_with(|c: char| c.is_alphanumeric()) {
            end_run(&mut run);
        }
        // A word ending a sentence (or a clause a capital may follow) makes the next one an
        // opening word; a token of punctuation alone changes nothing.
        if let Some(last) = token.trim_end_matches(['"', ')', '\'', '`']).chars().last() {
            opens_sentence = matches!(last, '.' | '!' | '?' | ':' | ';');
        }
    }
    end_run(&mut run);
    if names.len() as f32 > MOST_CAPITALISED * inner_words as f32 {
        return (Vec::new(), Vec::new());
    }
    (names, compounds)
}

/// The share of a prompt's words inside sentences that may be distinct capitalised words
/// before capitals no longer mark names (German nouns, Title Case). English prompts that name
/// one product sit near a tenth ("configure federation on a Dendrite homeserver": 1 of 8).
pub const MOST_CAPITALISED: f32 = 0.25;

/// The proper names of `prompt` ([`proper_names`]) that the index holds in no section, title
/// or alias — "configure federation on a Dendrite homeserver" asked of Synapse's documents —
/// and the names it writes as code whose words no one section holds together (`code_names`,
/// each with the sections holding all its words, as [`code_name_sections`] counts them): "nginx `limit_req` example" asked of documents that never write `req`
/// asks about another program's key — and the versions it asks about and the names of
/// several words it writes that no section writes in a row ([`written_versions`],
/// [`compound_names`]): "room version 11" asked of documents that stop at 10, "Element X"
/// asked of documents that write "Element" and "X" apart. A misspelt key reads as foreign
/// too, as a misspelt product name does; the prompt then gets only what a pin finds.
/// Empty when the prompt names one of the documents (`named`, its title or an alias, as
/// [`crate::named::named_documents`] found them): a prompt about `ember-deploy` that mentions
/// Kubernetes is still about `ember-deploy`.
pub fn foreign_names(
    index: &Index,
    prompt: &str,
    named: &crate::named::Named,
    code_names: &[(String, usize)],
) -> Result<Vec<String>, SearchError> {
    if !named.documents.is_empty() {
        return Ok(Vec::new());
    }
    // One pass reads both the single names and those of several words.
    let (names, compounds) = capitalised_names(prompt);
    let mut foreign = Vec::new();
    for name in names {
        let frequencies = index.term_frequencies(&name)?;
        // A name that analyses to no term (a stop word such as `The`) says nothing.
        if !frequencies.terms.is_empty() && frequencies.terms.iter().all(|(_, held)| *held == 0) {
            foreign.push(name);
        }
    }
    for (name, sections) in code_names {
        // A name of stop words alone (`is_a`) analyses to no term and says nothing.
        if *sections == 0 && !index.term_set(name).is_empty() {
            foreign.push(name.clone());
        }
    }
    // Versions and names of several words, whose words apart the documents may well hold.
    for phrase in written_versions(prompt).into_iter().chain(compounds) {
        if !written_in_a_section(index, &phrase)? {
            foreign.push(phrase);
        }
    }
    Ok(foreign)
}

/// The versions `prompt` asks about, lowercased with one space: the word `version` and the
/// number after it (`room version 11` → `version 11`, `Version v2.1` → `version 2.1`). A
/// prompt about a version its documents never write ("what changed in room version 11?"
/// asked of documents that stop at version 10) asks about something else, however familiar
/// its other words.
pub fn written_versions(prompt: &str) -> Vec<String> {
    static VERSION: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"(?i)\bversion\s+v?(\d+(?:\.\d+)*)\b").ok());
    let Some(pattern) = VERSION.as_ref() else {
        return Vec::new();
    };
    let mut versions: Vec<String> = Vec::new();
    for number in pattern.captures_iter(prompt).filter_map(|c| c.get(1)) {
        let version = format!("version {}", number.as_str());
        if !versions.contains(&version) {
            versions.push(version);
        }
    }
    versions
}

/// Whether a section's headings or text write `phrase`'s words in a row, read as lowercase
/// words of letters and digits (`Element X` in "element-x", `version 10` in "Version 10.2",
/// not in "version 100"). A section the index lists but the snapshot cannot show (a folder
/// whose texts live elsewhere) counts as writing it, and so do more sections holding all its
/// words than [`MOST_SECTIONS_READ`]: the rule only silences a prompt it is sure of.
fn written_in_a_section(index: &Index, phrase: &str) -> Result<bool, SearchError> {
    let words = |text: &str| {
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        format!(" {} ", words.join(" "))
    };
    let phrase = words(phrase);
    // Stop words alone (`The Who`) are no term the index could look up: nothing to go by.
    if index.term_set(&phrase).is_empty() {
        return Ok(true);
    }
    let snap = index.snapshot();
    let holding = index.chunk_ids_holding_all(&phrase, MOST_SECTIONS_READ + 1)?;
    if holding.len() > MOST_SECTIONS_READ {
        return Ok(true);
    }
    for id in holding {
        let Some((chunk, _)) = snap.chunk(id) else {
            return Ok(true);
        };
        if words(&format!("{}\n{}", chunk.breadcrumb, chunk.text)).contains(&phrase) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The most sections holding all the words of a version or a multi-word name that the hook
/// reads to find one writing them in a row ([`foreign_names`]). Words that more sections hold
/// are the folder's everyday words; reading them all would cost a large folder's hook more
/// than the rule is worth, so the name counts as written.
pub const MOST_SECTIONS_READ: usize = 1000;

/// How many sections may hold a name the prompt writes as code before it no longer points at
/// them: a key, flag or error code a few sections hold is what the prompt asks about, one that
/// many hold (`max_connections` across a folder of services) is a common word there.
pub const RARE_NAME_SECTIONS: usize = 3;

/// The names `prompt` writes as code ([`crate::route::code_names`]), each with how many
/// sections of the index may hold it — counted as the sections holding each of the name's
/// terms, which bounds those holding the name itself.
pub fn code_name_sections(
    index: &Index,
    prompt: &str,
) -> Result<Vec<(String, usize)>, SearchError> {
    crate::route::code_names(prompt)
        .into_iter()
        .map(|name| {
            let held = index.chunks_holding_all(&name)?;
            Ok((name, held))
        })
        .collect()
}

/// Whether a code name held by `sections` sections is rare enough to point at them: at least
/// one holds it and at most [`RARE_NAME_SECTIONS`].
pub fn is_rare(sections: usize) -> bool {
    (1..=RARE_NAME_SECTIONS).contains(&sections)
}

/// The least share of the sections holding every word of a document's title that must be the
/// document's own for a prompt writing that title to be read as naming the document. A
/// service's name sits in its own sections and in those of the few that depend on it (a
/// platform service that every runbook of a folder mentions: a third its own); a page titled
/// "Configuration" or "Parameters" shares its title with a folder that uses the word
/// everywhere (under a hundredth its own), and a prompt writing the word asks about no page.
pub const TITLE_OWN_SHARE: f32 = 0.25;

/// The documents of `named` ([`crate::named::named_documents`]) that the prompt names by a
/// title that is a name in this index ([`TITLE_OWN_SHARE`]). Those named by an alias are left
/// out: an alias is chosen as a name, whatever the folder's words.
pub fn named_by_title(
    index: &Index,
    snap: &Snapshot,
    named: &crate::named::Named,
) -> Result<Vec<i64>, SearchError> {
    let mut titled = Vec::new();
    for &id in &named.documents {
        if named.by_alias.contains(&id) {
            continue;
        }
        let Some(document) = snap.document(id) else {
            continue;
        };
        let title_terms = index.term_set(&document.title);
        let held = index.chunks_holding_all(&document.title)?;
        // A title of stop words alone names nothing.
        if title_terms.is_empty() || held == 0 {
            continue;
        }
        let needed = (TITLE_OWN_SHARE * held as f32).ceil() as usize;
        let sections = snap.chunks_of(id);
        // Fewer sections than needed: settled without reading them.
        if sections.len() < needed {
            continue;
        }
        let own = sections
            .into_iter()
            .filter(|c| title_terms.is_subset(&section_terms(index, &c.breadcrumb, &c.text)))
            .take(needed)
            .count();
        if own >= needed {
            titled.push(id);
        }
    }
    Ok(titled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frequencies(terms: &[(&str, u64)], chunks: u64) -> TermFrequencies {
        TermFrequencies {
            terms: terms.iter().map(|(t, c)| (t.to_string(), *c)).collect(),
            chunks,
        }
    }

    #[test]
    fn a_term_no_section_holds_outweighs_common_ones() {
        let f = frequencies(
            &[("configur", 300), ("homeserv", 500), ("dendrit", 0)],
            1000,
        );
        let q = QueryTerms::new(&f);
        let held: HashSet<String> = ["configur", "homeserv"].map(String::from).into();
        let coverage = q.coverage(&held);
        assert!(
            coverage < 0.4,
            "common words alone cover little: {coverage}"
        );
        assert!(q.unknown(&f) > 0.6);
        let all: HashSet<String> = ["configur", "homeserv", "dendrit"].map(String::from).into();
        assert!((q.coverage(&all) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn proper_names_skip_opening_words_pronouns_and_plain_words() {
        assert_eq!(
            proper_names("how do I configure federation on a Dendrite homeserver?"),
            ["Dendrite"]
        );
        assert_eq!(
            proper_names(
                "Clients of the gateway get HTTP 413 errors. Should I raise the limit? Ask \
                 Google's support team about (MUC) rooms"
            ),
            ["HTTP", "Google", "MUC"]
        );
        assert!(proper_names("What should I do when the cache fills up?").is_empty());
        assert!(proper_names("I'm stuck: Where is the restore step").is_empty());
        assert_eq!(proper_names("use Slack, then Slack again"), ["Slack"]);
        assert_eq!(
            proper_names("Hey Claude, how do I configure federation on a Dendrite homeserver?"),
            ["Dendrite"]
        );
        // Where capitals mark nouns or every word, they mark no name.
        assert!(
            proper_names("Wie richte ich die Föderation auf einem Dendrite Server ein?").is_empty()
        );
        assert!(proper_names("How To Configure Federation On A Dendrite Homeserver").is_empty());
    }

    #[test]
    fn code_names_count_only_where_written_whole() {
        let names = vec!["max_lifetime".to_string(), "m.room.retention".to_string()];
        let both = "send a state event of type `m.room.retention` with `MAX_LIFETIME` in it";
        assert_eq!(code_name_share(&names, "Room configuration", both), 1.0);
        // The words of a name, apart, are not the name.
        let words = "the max lifetime of a room's retention, in `max_lifetime`";
        assert_eq!(code_name_share(&names, "Default policy", words), 0.5);
        assert_eq!(code_name_share(&[], "Default policy", words), 0.0);
    }

    #[test]
    fn compound_names_are_capitalised_words_in_a_row_inside_a_sentence() {
        assert_eq!(
            compound_names("deploy a sliding sync proxy so Element X can connect"),
            ["Element X"]
        );
        assert_eq!(
            compound_names(
                "Clients of Quill Blobstore get HTTP 413 when they upload large files. Should I \
                 ask Quill Blobstore's team"
            ),
            ["Quill Blobstore"]
        );
        // An opening word, the pronoun, a possessive or a mark ends or starts nothing.
        assert!(compound_names("Can I VACUUM the SQLite database between runs?").is_empty());
        assert!(compound_names("Twisted's CancelledError vs asyncio's").is_empty());
        assert!(compound_names("Delete Room, then ask Matrix, Element and Synapse").is_empty());
        assert!(compound_names("How To Configure Federation On A Dendrite Homeserver").is_empty());
    }

    #[test]
    fn versions_are_the_word_version_and_its_number() {
        assert_eq!(
            written_versions("what changed in Matrix room version 11?"),
            ["version 11"]
        );
        assert_eq!(
            written_versions("Version v2.1 or version   2.1, and VERSION 3"),
            ["version 2.1", "version 3"]
        );
        // A number alone, or a name's, is no version asked about.
        assert!(written_versions("clients get HTTP 413 at ID 3, upgrading to 1.88").is_empty());
        assert!(written_versions("which version is the default?").is_empty());
    }

    #[test]
    fn no_terms_no_coverage() {
        let q = QueryTerms::new(&frequencies(&[], 10));
        assert_eq!(q.coverage(&HashSet::new()), 0.0);
    }
}
