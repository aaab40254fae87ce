//! The credential store's file: its JSON (rmcp's `StoredCredentials` and what we keep beside
//! them), read bounded and refused when other users can read it, written atomically with mode
//! 0600, and the stamp that tells whether someone else rewrote it.

use std::path::Path;
use std::time::SystemTime;

use rmcp::transport::auth::StoredCredentials;
use serde::{Deserialize, Serialize};

/// The largest store file read (a store is a few kilobytes).
pub(super) const MAX_STORE_BYTES: u64 = 1024 * 1024;

/// The file's JSON: rmcp's `StoredCredentials` fields, the refresh token's expiry, the client's
/// own registration and the scopes a server asked for beyond the grant.
#[derive(Serialize, Deserialize)]
pub(super) struct StoreFile {
    #[serde(flatten)]
    pub(super) credentials: StoredCredentials,
    /// Unix time the refresh token expires, when the authorization server said so
    /// (`refresh_token_expires_in`); kept across refreshes that do not rotate the refresh token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) refresh_token_expires_at: Option<u64>,
    /// How `oauth login` registered this client, when it did (no `client_id` configured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) registration: Option<Registration>,
    /// Scopes the server asked for (`403 insufficient_scope`) that the grant lacks: the next
    /// `oauth login` asks for the granted scopes plus these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) step_up: Vec<String>,
    /// The DPoP key pair the tokens are bound to (RFC 9449), when DPoP is used: its PKCS#8 DER,
    /// base64url. Created with the first DPoP token request, replaced by each login.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) dpop_key: Option<String>,
}

/// How a client registered itself with one authorization server: kept in the store, reused by
/// the next logins and by the hub's refreshes, redone when the authorization server changes.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Registration {
    /// The client id the authorization server issued (or the metadata document URL).
    pub(crate) client_id: String,
    /// The client secret the authorization server issued, if any (never shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_secret: Option<String>,
    /// `dynamic` (RFC 7591) or `metadata_document` (a Client ID Metadata Document URL).
    pub(crate) method: String,
    /// The authorization server's `issuer`, where its metadata names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) issuer: Option<String>,
    /// Its token endpoint: the authorization server this registration belongs to, with `issuer`.
    pub(crate) token_endpoint: String,
    /// The redirect URI registered (a later login listens on the same port).
    pub(crate) redirect_uri: String,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("method", &self.method)
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("redirect_uri", &self.redirect_uri)
            .finish()
    }
}

impl Registration {
    /// Whether this registration belongs to the authorization server `metadata` describes.
    pub(crate) fn belongs_to(&self, issuer: Option<&str>, token_endpoint: &str) -> bool {
        match (self.issuer.as_deref(), issuer) {
            (Some(ours), Some(theirs)) => ours == theirs,
            _ => self.token_endpoint == token_endpoint,
        }
    }
}

/// A file's length, modification time and permissions: whether someone else rewrote it (or
/// fixed its mode).
pub(super) type Stamp = (u64, SystemTime, u32);

pub(super) fn stamp(meta: &std::fs::Metadata) -> Option<Stamp> {
    #[cfg(unix)]
    let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
    #[cfg(not(unix))]
    let mode = 0;
    Some((meta.len(), meta.modified().ok()?, mode))
}

pub(super) fn stamp_of(path: &Path) -> Option<Stamp> {
    stamp(&std::fs::metadata(path).ok()?)
}

/// Reads and parses the file; `Ok(None)` when it does not exist. Errors name the file and what to
/// do, never a value from it (a parse error gives only the line and column).
pub(super) fn read_store(path: &Path) -> Result<(Option<StoreFile>, Option<Stamp>), String> {
    use std::io::Read as _;
    let shown = path.display();
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, None)),
        Err(e) => return Err(format!("cannot read the credential store `{shown}`: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read the credential store `{shown}`: {e}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(format!(
                "the credential store `{shown}` is open to other users (mode {mode:04o}): run \
                 `chmod 600 {shown}`"
            ));
        }
    }
    let mut bytes = Vec::new();
    file.take(MAX_STORE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the credential store `{shown}`: {e}"))?;
    if bytes.len() as u64 > MAX_STORE_BYTES {
        return Err(format!(
            "the credential store `{shown}` is larger than {MAX_STORE_BYTES} bytes: it is not a \
             credential store"
        ));
    }
    let stamp = stamp(&meta);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok((None, stamp));
    }
    let parsed: StoreFile = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "the credential store `{shown}` is not a credential store (JSON {:?} error at line {} \
             column {}; see docs/oauth.md for the format)",
            e.classify(),
            e.line(),
            e.column()
        )
        .replace("Syntax", "syntax")
        .replace("Data", "data")
        .replace("Eof", "end-of-file")
    })?;
    Ok((Some(parsed), stamp))
}

/// Writes the file atomically (a temporary file in the same directory, mode 0600, renamed over
/// it); creates the directory (mode 0700) when missing.
pub(super) fn write_store(path: &Path, file: &StoreFile) -> Result<Option<Stamp>, String> {
    use std::io::Write as _;
    let shown = path.display();
    let text = serde_json::to_vec_pretty(file)
        .map_err(|e| format!("cannot encode the credential store `{shown}`: {e}"))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(dir)
            .map_err(|e| format!("cannot create the directory of `{shown}`: {e}"))?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "credentials".into());
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let result = (|| {
        let mut out = options.open(&tmp)?;
        out.write_all(&text)?;
        out.write_all(b"\n")?;
        out.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write the credential store `{shown}`: {e}"));
    }
    Ok(stamp_of(path))
}
