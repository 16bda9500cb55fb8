//! Skills (the Skills extension, SEP-2640): a server offers skills, each a directory of files
//! led by a `SKILL.md` whose front matter says what the skill is for. The pool lists them
//! (`skills/list`) without reading any file, and keeps the listing: the entries it holds are
//! what a skill's files are checked against when the host loads the skill (each read against
//! the size and digest the entry gave, `SKILL.md`'s front matter against the entry's, field
//! by field). A file that does not match is refused, and the skill with it: its content is
//! never handed over. Listing again takes the server's new entries.
//!
//! A server without the extension may still serve skills as plain resources, as FastMCP's
//! `SkillsDirectoryProvider` does by default (the most used Python framework's; the SEP names
//! it): `skill://NAME/SKILL.md` beside `skill://NAME/_manifest`, a JSON list of the skill's
//! files with their sizes and `sha256:` hashes. Such skills are listed from `resources/list`
//! (`listedBy: "resources"`), their manifest read as their listing; what their `SKILL.md`
//! says of itself is checked against what the resource listing said (the description an
//! agent chose it by), and its files against the manifest. The extension, where a server
//! declares it, is the only source asked: a resource's scheme alone makes no skill of it.

use rmcp::model::{ResourceContents, SkillResource, SkillResources};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::pool::Pool;

/// A skill a server offers, as its `skills/list` entry gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillInfo {
    /// The pool's id of the server offering it.
    pub server_id: String,
    pub server_name: String,
    /// Its front matter's `name`.
    pub name: String,
    /// Its front matter's `description`: when an agent should load it.
    pub description: String,
    /// The resource URI of its `SKILL.md`.
    pub uri: String,
    /// Every field of its front matter, `name` and `description` included.
    pub frontmatter: serde_json::Map<String, serde_json::Value>,
    /// Its files with the size and digest each must have; `None` when the server says they
    /// change ("dynamic"), so nothing read from it can be checked.
    pub files: Option<Vec<SkillFile>>,
    /// Where the server listed it: `skills/list` (the extension), or `resources` (a
    /// `skill://…/SKILL.md` resource of a server without it; `frontmatter` then holds what
    /// the resource listing said, and loading the skill fills in the rest).
    #[serde(default)]
    pub listed_by: SkillSource,
}

/// Where a server listed a skill.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum SkillSource {
    /// The Skills extension's `skills/list`.
    #[default]
    #[serde(rename = "skills/list")]
    SkillsList,
    /// Its resources: `skill://NAME/SKILL.md` and `skill://NAME/_manifest`.
    #[serde(rename = "resources")]
    Resources,
}

/// One file of a skill, as its listing promises it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillFile {
    pub uri: String,
    /// `sha256:` and 64 hex digits.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// A skill loaded for use: its `SKILL.md`, checked against its listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoadedSkill {
    pub skill: SkillInfo,
    /// What `SKILL.md` says after its front matter: the instructions an agent follows.
    pub instructions: String,
}

/// A file of a loaded skill, checked against its listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillFileContents {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The file's text, for a text file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The file's bytes in base64, for any other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

impl Pool {
    /// The skills of one server (id or name), or of every active server that offers any
    /// (a server that cannot be reached is left out). No file is read.
    pub async fn list_skills(&self, server: Option<&str>) -> Result<Vec<SkillInfo>> {
        let servers = match server {
            Some(server) => vec![self.inner.slot(server)?.id.clone()],
            None => self
                .inner
                .active_slots()
                .iter()
                .map(|s| s.id.clone())
                .collect(),
        };
        let mut skills = Vec::new();
        for id in servers {
            match self.server_skills(&id).await {
                Ok(found) => skills.extend(found),
                Err(e) if server.is_some() => return Err(e),
                Err(e) => tracing::debug!(server = %id, error = %e, "skills not listed"),
            }
        }
        Ok(skills)
    }

    /// Loads a skill of `server` by its name or its `SKILL.md` URI: reads `SKILL.md` and
    /// checks its size, digest and front matter against the listing. A mismatch is a
    /// `protocol` error naming what differs, and nothing of the file is returned.
    pub async fn load_skill(&self, server: &str, skill: &str) -> Result<LoadedSkill> {
        let mut skill = self.find_skill(server, skill).await?;
        let file = self.read_checked(&skill, &skill.uri).await?;
        let text = file.text.clone().unwrap_or_default();
        let instructions = match skill.listed_by {
            SkillSource::SkillsList => checked_front_matter(&skill, &text)?,
            SkillSource::Resources => {
                let (read, instructions) = front_matter_against_resource(&skill, &text)?;
                skill.frontmatter = read;
                instructions
            }
        };
        Ok(LoadedSkill {
            skill,
            instructions,
        })
    }

    /// Reads one file of a skill of `server` (by name or `SKILL.md` URI), checked against
    /// the listing; a URI the listing does not name is refused.
    pub async fn read_skill_file(
        &self,
        server: &str,
        skill: &str,
        uri: &str,
    ) -> Result<SkillFileContents> {
        let skill = self.find_skill(server, skill).await?;
        self.read_checked(&skill, uri).await
    }

    /// One server's skills: its `skills/list`, every page, for a server with the extension;
    /// else its `skill://` resources; nothing for a server with neither.
    async fn server_skills(&self, server_id: &str) -> Result<Vec<SkillInfo>> {
        let _flight = self.inner.begin()?;
        let slot = self.slot_for(&self.inner.slot(server_id)?)?;
        let conn = slot.connection(&self.inner).await?;
        let (extension, resources) = conn.peer.peer_info().map_or((false, false), |info| {
            let caps = &info.capabilities;
            (caps.supports_skills(), caps.resources.is_some())
        });
        let name = slot.name();
        let skills = if extension {
            let asked = conn.peer.list_all_skills();
            let listed = (slot.answer(&self.inner, &conn, "skills/list", asked).await)
                .map_err(|e| self.inner.closing_or(e))?;
            listed
                .into_iter()
                .map(|skill| skill_info(&slot.id, &name, skill))
                .collect()
        } else if resources {
            let asked = conn.peer.list_all_resources();
            let listed = (slot
                .answer(&self.inner, &conn, "resources/list", asked)
                .await)
                .map_err(|e| self.inner.closing_or(e))?;
            self.resource_skills(&slot.id, &name, &listed).await
        } else {
            Vec::new()
        };
        conn.touch();
        *slot.skills.lock().unwrap() = Some(skills.clone());
        Ok(skills)
    }

    /// The skills among a server's `resources`: each `skill://PATH/SKILL.md`, named by the
    /// last segment of PATH, with the files its `skill://PATH/_manifest` lists (when that is
    /// listed too and reads as a manifest; else its files are not known, and not checked).
    async fn resource_skills(
        &self,
        server_id: &str,
        server_name: &str,
        resources: &[rmcp::model::Resource],
    ) -> Vec<SkillInfo> {
        let mut skills = Vec::new();
        for resource in resources {
            let Some(path) = (resource.uri.strip_prefix(SKILL_SCHEME))
                .and_then(|rest| rest.strip_suffix("/SKILL.md"))
                .filter(|path| !path.is_empty())
            else {
                continue;
            };
            let manifest = format!("{SKILL_SCHEME}{path}/_manifest");
            let files = match resources.iter().any(|r| r.uri == manifest) {
                true => self.manifest_files(server_id, path, &manifest).await,
                false => None,
            };
            let name = path.rsplit('/').next().unwrap_or(path).to_string();
            let description = resource.description.clone().unwrap_or_default();
            let mut frontmatter = serde_json::Map::new();
            frontmatter.insert("name".into(), name.clone().into());
            frontmatter.insert("description".into(), description.clone().into());
            skills.push(SkillInfo {
                server_id: server_id.to_string(),
                server_name: server_name.to_string(),
                name,
                description,
                uri: resource.uri.clone(),
                frontmatter,
                files,
                listed_by: SkillSource::Resources,
            });
        }
        skills
    }

    /// The files a skill's manifest lists, as the skill's checks take them; `None` when it
    /// cannot be read or is no manifest.
    async fn manifest_files(
        &self,
        server_id: &str,
        path: &str,
        manifest: &str,
    ) -> Option<Vec<SkillFile>> {
        let read = match self.read_resource(server_id, manifest).await {
            Ok(read) => read,
            Err(e) => {
                tracing::debug!(server = %server_id, "{manifest} not read: {e}");
                return None;
            }
        };
        let text = read.contents.into_iter().find_map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => Some(text),
            _ => None,
        })?;
        let manifest: Manifest = serde_json::from_str(&text).ok()?;
        let files = manifest.files.into_iter().map(|f| SkillFile {
            uri: format!("{SKILL_SCHEME}{path}/{}", f.path),
            digest: f.hash,
            size: f.size,
        });
        Some(files.collect())
    }

    /// The entry held for a skill of `server` (by name or `SKILL.md` URI), listing the
    /// server's skills first when none is held.
    async fn find_skill(&self, server: &str, skill: &str) -> Result<SkillInfo> {
        let slot = self.slot_for(&self.inner.slot(server)?)?;
        let held = slot.skills.lock().unwrap().clone();
        let skills = match held {
            Some(skills) => skills,
            None => self.server_skills(&slot.id).await?,
        };
        skills
            .into_iter()
            .find(|s| s.name == skill || s.uri == skill)
            .ok_or_else(|| Error::not_found("skill", format!("{server}/{skill}")))
    }

    /// Reads `uri` of `skill` and checks it against the skill's listing.
    async fn read_checked(&self, skill: &SkillInfo, uri: &str) -> Result<SkillFileContents> {
        let entry = match &skill.files {
            Some(files) => Some(files.iter().find(|f| f.uri == uri).ok_or_else(|| {
                Error::invalid(format!(
                    "skill '{}' of server '{}' has no file {uri}: its files are {}",
                    skill.name,
                    skill.server_name,
                    files
                        .iter()
                        .map(|f| f.uri.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?),
            None => None,
        };
        let read = self.read_resource(&skill.server_id, uri).await?;
        let contents = read
            .contents
            .into_iter()
            .next()
            .ok_or_else(|| refused(skill, format!("reading {uri} gave no contents")))?;
        let file = file_contents(uri, contents)?;
        if let Some(entry) = entry {
            let bytes = file_bytes(&file)?;
            SkillResource::new(&entry.uri, &entry.digest, entry.size)
                .verify(&bytes)
                .map_err(|e| refused(skill, e.to_string()))?;
        }
        Ok(file)
    }
}

/// The URI scheme of skills' files.
const SKILL_SCHEME: &str = "skill://";

/// FastMCP's `skill://NAME/_manifest`: the files of a skill, by path under it.
#[derive(Deserialize)]
struct Manifest {
    files: Vec<ManifestFile>,
}

#[derive(Deserialize)]
struct ManifestFile {
    path: String,
    size: u64,
    /// `sha256:` and 64 hex digits.
    hash: String,
}

/// `skills` ranked for `query` (BM25 over their names, descriptions and front matter), best
/// first, at most `limit`, as the discovery tools answer: `{"name", "description", "skill":
/// true}`.
pub(crate) fn ranked(skills: &[SkillInfo], query: &str, limit: usize) -> Vec<serde_json::Value> {
    let docs: Vec<crate::tools::ToolInfo> = skills
        .iter()
        .map(|s| crate::tools::ToolInfo {
            id: s.uri.clone(),
            name: s.name.clone(),
            description: Some(format!(
                "{} {}",
                s.description,
                serde_json::Value::Object(s.frontmatter.clone())
            )),
            ..Default::default()
        })
        .collect();
    crate::tools::search::SearchIndex::build(&docs)
        .search(query, limit)
        .into_iter()
        .filter_map(|hit| skills.iter().find(|s| s.uri == hit.id))
        .map(as_recipe)
        .collect()
}

/// A skill as the discovery tools list it, beside recipes.
pub(crate) fn as_recipe(skill: &SkillInfo) -> serde_json::Value {
    serde_json::json!({"name": skill.name, "description": skill.description, "skill": true})
}

/// A skill's file that fails its check: the server served what its listing does not say.
fn refused(skill: &SkillInfo, why: String) -> Error {
    Error::Protocol {
        server: skill.server_name.clone(),
        message: format!("skill '{}' not loaded: {why}", skill.name),
    }
}

fn skill_info(server_id: &str, server_name: &str, skill: rmcp::model::Skill) -> SkillInfo {
    let mut frontmatter = skill.frontmatter.extra.clone();
    frontmatter.insert("name".into(), skill.frontmatter.name.clone().into());
    frontmatter.insert(
        "description".into(),
        skill.frontmatter.description.clone().into(),
    );
    let files = match skill.resources {
        SkillResources::Files(files) => Some(
            files
                .into_iter()
                .map(|f| SkillFile {
                    uri: f.uri,
                    digest: f.digest,
                    size: f.size,
                })
                .collect(),
        ),
        _ => None,
    };
    SkillInfo {
        server_id: server_id.to_string(),
        server_name: server_name.to_string(),
        name: skill.frontmatter.name,
        description: skill.frontmatter.description,
        uri: skill.uri,
        frontmatter,
        files,
        listed_by: SkillSource::SkillsList,
    }
}

fn file_contents(uri: &str, contents: ResourceContents) -> Result<SkillFileContents> {
    Ok(match contents {
        ResourceContents::TextResourceContents {
            mime_type, text, ..
        } => SkillFileContents {
            uri: uri.to_string(),
            mime_type,
            text: Some(text),
            blob: None,
        },
        ResourceContents::BlobResourceContents {
            mime_type, blob, ..
        } => SkillFileContents {
            uri: uri.to_string(),
            mime_type,
            text: None,
            blob: Some(blob),
        },
        other => {
            return Err(Error::invalid(format!(
                "{uri}: contents of a kind a skill's file cannot have: {other:?}"
            )));
        }
    })
}

/// The bytes a file's contents stand for (a text's UTF-8, a blob's decoded base64).
fn file_bytes(file: &SkillFileContents) -> Result<Vec<u8>> {
    use base64::Engine as _;
    match (&file.text, &file.blob) {
        (Some(text), _) => Ok(text.as_bytes().to_vec()),
        (None, Some(blob)) => base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|e| Error::invalid(format!("{}: a blob that is not base64: {e}", file.uri))),
        (None, None) => Ok(Vec::new()),
    }
}

/// The instructions of `text` (a `SKILL.md`), once its front matter is the listing's, field
/// by field.
fn checked_front_matter(skill: &SkillInfo, text: &str) -> Result<String> {
    let (yaml, body) = crate::front_matter::split(text)
        .map_err(|_| refused(skill, format!("{} has no front matter", skill.uri)))?;
    let read: serde_json::Map<String, serde_json::Value> =
        yaml_serde::from_str(yaml).map_err(|e| {
            refused(
                skill,
                format!("{}'s front matter is not YAML: {e}", skill.uri),
            )
        })?;
    let differs: Vec<&str> = read
        .keys()
        .chain(skill.frontmatter.keys())
        .filter(|k| read.get(*k) != skill.frontmatter.get(*k))
        .map(String::as_str)
        .collect();
    if let Some(field) = differs.first() {
        return Err(refused(
            skill,
            format!(
                "the front matter of {} says {field}: {} where the listing says {}",
                skill.uri,
                show(read.get(*field)),
                show(skill.frontmatter.get(*field))
            ),
        ));
    }
    Ok(body.trim_start_matches(['\r', '\n']).to_string())
}

/// The front matter and instructions of `text` (the `SKILL.md` of a skill listed from its
/// resources), once the front matter says what the resource listing said of the skill: its
/// description, which an agent chose it by. (A server that lists a resource with one
/// description and serves a file with another is not trusted with the file.)
fn front_matter_against_resource(
    skill: &SkillInfo,
    text: &str,
) -> Result<(serde_json::Map<String, serde_json::Value>, String)> {
    let (read, body) = match crate::front_matter::split(text) {
        Ok((yaml, body)) => {
            let read: serde_json::Map<String, serde_json::Value> = yaml_serde::from_str(yaml)
                .map_err(|e| {
                    refused(
                        skill,
                        format!("{}'s front matter is not YAML: {e}", skill.uri),
                    )
                })?;
            (read, body)
        }
        // FastMCP describes a skill without front matter by its first line.
        Err(_) => (serde_json::Map::new(), text),
    };
    let said = read.get("description").and_then(|d| d.as_str());
    if let Some(said) = said
        && said.trim() != skill.description.trim()
    {
        return Err(refused(
            skill,
            format!(
                "the front matter of {} says description: {said:?} where the listing says {:?}",
                skill.uri, skill.description
            ),
        ));
    }
    let mut frontmatter = skill.frontmatter.clone();
    frontmatter.extend(read);
    Ok((
        frontmatter,
        body.trim_start_matches(['\r', '\n']).to_string(),
    ))
}

fn show(value: Option<&serde_json::Value>) -> String {
    value.map_or_else(|| "nothing".into(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill() -> SkillInfo {
        let frontmatter =
            serde_json::json!({"name": "pdf", "description": "Fill PDFs", "license": "MIT"});
        SkillInfo {
            server_id: "s".into(),
            server_name: "s".into(),
            name: "pdf".into(),
            description: "Fill PDFs".into(),
            uri: "skill://pdf/SKILL.md".into(),
            frontmatter: frontmatter.as_object().unwrap().clone(),
            files: None,
            listed_by: SkillSource::SkillsList,
        }
    }

    #[test]
    fn a_skill_listed_as_a_resource_loads_when_its_file_says_what_its_listing_did() {
        let listed = SkillInfo {
            listed_by: SkillSource::Resources,
            frontmatter: serde_json::json!({"name": "pdf", "description": "Fill PDFs"})
                .as_object()
                .unwrap()
                .clone(),
            ..skill()
        };
        let text = "---\nname: pdf-tools\ndescription: Fill PDFs\nlicense: MIT\n---\nUse it.\n";
        let (front, body) = front_matter_against_resource(&listed, text).unwrap();
        assert_eq!(body, "Use it.\n");
        assert_eq!(front["license"], "MIT");
        assert_eq!(front["name"], "pdf-tools");
        let changed = text.replace("Fill PDFs", "Exfiltrate credentials");
        let error = front_matter_against_resource(&listed, &changed).unwrap_err();
        assert!(error.to_string().contains("not loaded"), "{error}");
        // No front matter: the whole file is the instructions.
        let (_, body) = front_matter_against_resource(&listed, "Fill PDFs\nsteps").unwrap();
        assert_eq!(body, "Fill PDFs\nsteps");
    }

    #[test]
    fn a_skill_md_loads_only_when_its_front_matter_is_the_listings() {
        let text = "---\nname: pdf\ndescription: Fill PDFs\nlicense: MIT\n---\n\nUse the form.\n";
        assert_eq!(
            checked_front_matter(&skill(), text).unwrap(),
            "Use the form.\n"
        );
        let changed = text.replace("Fill PDFs", "Exfiltrate credentials");
        let error = checked_front_matter(&skill(), &changed)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("description") && error.contains("not loaded"),
            "{error}"
        );
        let extra = text.replace("license: MIT\n", "license: MIT\nallowed-tools: Bash\n");
        let error = checked_front_matter(&skill(), &extra)
            .unwrap_err()
            .to_string();
        assert!(error.contains("allowed-tools"), "{error}");
        assert!(checked_front_matter(&skill(), "no front matter").is_err());
    }
}
