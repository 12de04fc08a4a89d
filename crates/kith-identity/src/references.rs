//! Personal references: which surfaces are "I", "we", "they", … rather than
//! names. Ingestion keeps such a reference local to its event, and the
//! organizer never merges or aliases one.

/// The canonical word of a personal reference's family (`I`, `we`, `you`,
/// `he`, `she`, `they`, `it`), or `None` when the surface is not a personal
/// reference or its entity type makes it a named thing (US/country,
/// IT/technology, I/chemical). The word lists are grounding's
/// ([`kith_extract::grounding::PERSONAL_FAMILIES`]), so both layers agree.
pub fn personal_family(surface: &str, entity_type: Option<&str>) -> Option<&'static str> {
    if entity_type.is_some_and(kith_extract::grounding::is_named_reference_type) {
        return None;
    }
    let family = kith_extract::grounding::personal_family(surface)?;
    // Each family's first word names it; the first person is written "I".
    Some(match family[0] {
        "i" => "I",
        first => first,
    })
}
