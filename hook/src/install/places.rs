//! Reading the places of an install target: each file read and validated before anything is
//! written, and the project places earlier installs recorded.

use std::path::Path;

use anyhow::Context;

use super::json_doc::{self, JsonDoc};
use super::manifest::Manifest;
use super::target::{InstallTarget, Place, Scope};

/// One place read and checked, ready to be merged.
pub struct Loaded {
    /// The place.
    pub place: Place,
    /// Its file, read.
    pub doc: JsonDoc,
}

/// Reads `place` and validates the parts we would touch; an error refuses the install.
pub fn load(place: Place) -> anyhow::Result<Loaded> {
    let describe = place.format.describe();
    let doc = JsonDoc::read(&place.path, describe)?;
    place
        .format
        .validate(&doc.root)
        .with_context(|| json_doc::refusal(&place.path, describe))?;
    Ok(Loaded { place, doc })
}

/// Every place of `target` that an earlier install recorded, for `exclude`'s scope excepted.
pub fn recorded_places(
    target: &dyn InstallTarget,
    home: &Path,
    manifest: &Manifest,
    exclude: &Scope,
) -> Vec<Place> {
    manifest
        .project_roots(target.name())
        .into_iter()
        .map(|root| Scope::Project { root })
        .filter(|s| s != exclude)
        .flat_map(|s| target.places(home, &s))
        .collect()
}
