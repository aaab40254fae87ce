//! The credential store file: rmcp's [`StoredCredentials`] as JSON, plus what we learn about the
//! refresh token's lifetime. Written atomically with mode 0600; refused when other users can read
//! it. Every load and save recomputes the expiries the gauge exports; a refused refresh token is
//! remembered so the server's reason can say so; a file rewritten by a re-authorization is noticed.
//!
//! By concern: `file.rs` is the file on disk (its JSON, bounded reads, atomic 0600 writes);
//! `expiry.rs` what the store knows of its credentials' lifetimes; this file the store itself
//! (the rmcp `CredentialStore`, the problems it remembers for the server's reason, the watch for a
//! re-authorization). The DPoP key pair it keeps is `../dpop_key.rs`.

use crate::util::MutexExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use tokio::sync::watch;

use crate::client::credential_expiry::CredentialState;

mod expiry;
mod file;

use crate::state::{CredentialExpiry, CredentialKind};
use expiry::{
    access_fingerprint, expiries_of, refresh_expires_at, refresh_fingerprint,
    refresh_lifetime_from_response,
};
pub(crate) use file::Registration;
use file::{Stamp, StoreFile, read_store, stamp_of, write_store};

/// How often a store whose refresh token was refused is looked at for a re-authorization.
const WATCH_INTERVAL: Duration = Duration::from_secs(2);

/// Why the store cannot give a usable token right now, for the server's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Problem {
    /// The authorization server answered the refresh with `invalid_grant`.
    RefreshRefused { token: u64 },
    /// No file, or a file without tokens.
    Empty,
    /// Unreadable, too loose permissions, not JSON of the expected shape.
    Broken(String),
    /// The authorization server refused the client credentials (the message says what to
    /// rotate); stays until a token is fetched again.
    Rejected(String),
    /// The server asked for scopes the grant lacks (`403 insufficient_scope`); stays until a
    /// grant carries them (a login that asked for them, or a renewal whose token does): the
    /// client's own renewals without them change nothing.
    StepUp { token: u64 },
}

struct Inner {
    path: PathBuf,
    status: watch::Sender<CredentialState>,
    problem: Mutex<Option<Problem>>,
    /// The file as last read or written by us.
    seen: Mutex<Option<Stamp>>,
    watching: std::sync::atomic::AtomicBool,
    /// Tokens renewed without a refresh token (client credentials): renewable all the same.
    renewed_by_hub: bool,
    /// Expiries known beside the store's tokens (the workload identity token's `exp`).
    beside: Mutex<Vec<CredentialExpiry>>,
    /// The DPoP key as last read or written, or made for tokens not yet saved.
    dpop: Mutex<DpopSlot>,
}

/// The store's DPoP key pair: the file's (followed on each read), or a new one for the tokens
/// being requested (`pending`: kept over what the file says until the tokens are saved with it).
#[derive(Default)]
struct DpopSlot {
    key: Option<Arc<crate::client::oauth::dpop_key::DpopKey>>,
    pending: bool,
}

/// A [`CredentialStore`] over one file. Cheap to clone.
#[derive(Clone)]
pub(crate) struct FileStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for FileStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileStore")
            .field("path", &self.inner.path)
            .finish()
    }
}

impl FileStore {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self::with_renewal(path, false)
    }

    /// A store of client-credentials tokens (`renewed_by_hub`): the hub renews them, so the
    /// access token's expiry is exported as renewable though there is no refresh token.
    pub(crate) fn with_renewal(path: PathBuf, renewed_by_hub: bool) -> Self {
        FileStore {
            inner: Arc::new(Inner {
                path,
                status: watch::Sender::new(CredentialState::default()),
                problem: Mutex::new(None),
                seen: Mutex::new(None),
                watching: std::sync::atomic::AtomicBool::new(false),
                renewed_by_hub,
                beside: Mutex::new(Vec::new()),
                dpop: Mutex::new(DpopSlot::default()),
            }),
        }
    }

    /// Records that the authorization server refused the client credentials (`why` says what
    /// to rotate).
    pub(crate) fn reject(&self, why: String) {
        *self.inner.problem.lock_unpoisoned() = Some(Problem::Rejected(why));
    }

    /// Sets the expiry of a credential kept outside the store (the workload identity token's
    /// `exp`; `None`: unknown), exported beside the tokens'.
    pub(crate) fn set_beside(&self, kind: CredentialKind, expiry: Option<CredentialExpiry>) {
        {
            let mut beside = self.inner.beside.lock_unpoisoned();
            beside.retain(|e| e.kind != kind);
            beside.extend(expiry);
        }
        let beside = self.inner.beside.lock_unpoisoned().clone();
        self.inner.status.send_if_modified(|status| {
            let mut expiries: Vec<CredentialExpiry> = status
                .expiries
                .iter()
                .filter(|e| e.kind != kind)
                .copied()
                .collect();
            expiries.extend(beside.iter().filter(|e| e.kind == kind).copied());
            let changed = status.expiries != expiries;
            status.expiries = expiries;
            changed
        });
    }

    /// Forgets a refusal of the client credentials (a token was fetched since).
    pub(crate) fn clear_rejection(&self) {
        let mut problem = self.inner.problem.lock_unpoisoned();
        if matches!(*problem, Some(Problem::Rejected(_))) {
            *problem = None;
        }
    }

    /// Whether the server asked for a scope the grant lacks and no grant has carried it since:
    /// every token like the current one is refused, so renewing it is paced.
    pub(crate) fn step_up_pending(&self) -> bool {
        matches!(
            *self.inner.problem.lock_unpoisoned(),
            Some(Problem::StepUp { .. })
        )
    }

    pub(crate) fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Changes of the known expiries and re-authorizations.
    pub(crate) fn subscribe(&self) -> watch::Receiver<CredentialState> {
        self.inner.status.subscribe()
    }

    /// Why no usable token can be had, in words that say what to run (`reauthorize`), or `None`
    /// when nothing is known to be wrong with the store.
    pub(crate) fn problem(&self, reauthorize: &str) -> Option<String> {
        let path = self.inner.path.display();
        Some(match self.inner.problem.lock_unpoisoned().clone()? {
            Problem::RefreshRefused { .. } => format!(
                "the authorization server refused the refresh token (invalid_grant: revoked or \
                 expired); re-authorize: {reauthorize}"
            ),
            Problem::Empty => {
                format!("the credential store `{path}` holds no tokens; authorize: {reauthorize}")
            }
            Problem::Broken(why) => format!("{why}; or re-authorize: {reauthorize}"),
            Problem::Rejected(why) => why,
            // A grant the hub renews has no login: the authorization server must grant the
            // client the scopes, then the hub's next token request carries them.
            Problem::StepUp { .. } if self.inner.renewed_by_hub => String::from(
                "the server asked for scopes the grant lacks; have its authorization server grant \
                 this client those scopes (and list them in `oauth.scopes`): the hub's next token \
                 request picks them up, no login needed",
            ),
            Problem::StepUp { .. } => format!(
                "the server asked for scopes the grant lacks; re-authorize with the scopes \
                 granted plus these: {reauthorize}"
            ),
        })
    }

    /// Reads the file now (also what tells the gauge about tokens already there).
    pub(crate) async fn refresh_status(&self) {
        let _ = self.load().await;
    }

    /// Starts (once) the task that notices a re-authorization: while the store cannot give a
    /// usable token (refused, missing, unreadable), a file that changes is read again, and one
    /// that works now (another refresh token, fixed permissions) lets the server try again.
    pub(crate) fn watch_for_reauthorization(&self) {
        if self
            .inner
            .watching
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return;
        }
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(WATCH_INTERVAL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(inner) = weak.upgrade() else { return };
                let store = FileStore { inner };
                if store.inner.problem.lock_unpoisoned().is_none() {
                    continue;
                }
                let path = store.inner.path.clone();
                let stamp = tokio::task::spawn_blocking(move || stamp_of(&path))
                    .await
                    .ok()
                    .flatten();
                if stamp.is_some() && stamp != *store.inner.seen.lock_unpoisoned() {
                    let _ = store.load().await;
                }
            }
        });
    }

    fn record(&self, file: Option<&StoreFile>, problem: Option<Problem>) {
        let reauthorized = {
            let mut current = self.inner.problem.lock_unpoisoned();
            let was_stuck = current.is_some();
            // A refused token stays refused until the file holds another refresh token.
            let still_refused = match (&*current, file) {
                (Some(Problem::RefreshRefused { token }), Some(file)) => {
                    refresh_fingerprint(&file.credentials) == Some(*token)
                }
                // Cleared by the renewal that succeeds, not by reading the old token again.
                (Some(Problem::Rejected(_)), _) => true,
                // A renewal is not a re-authorization: a step-up stays while the file still
                // lacks a scope the server asked for (a login, or a renewal whose grant carries
                // the scope, clears `step_up`), and, when nothing is listed there, until another
                // access token arrives.
                (Some(Problem::StepUp { token }), Some(file)) => {
                    !file.step_up.is_empty()
                        || access_fingerprint(&file.credentials) == Some(*token)
                }
                _ => false,
            };
            if !still_refused {
                *current = problem.clone();
            }
            was_stuck && !still_refused && problem.is_none()
        };
        // Refused credentials expire no more: they are dead already (the server is
        // unauthenticated, which pages on its own).
        let refused = matches!(
            *self.inner.problem.lock_unpoisoned(),
            Some(Problem::RefreshRefused { .. })
        );
        let expiries = match file {
            Some(file) if !refused => expiries_of(file, self.inner.renewed_by_hub),
            _ => Vec::new(),
        };
        let mut expiries = expiries;
        expiries.extend(self.inner.beside.lock_unpoisoned().iter().copied());
        self.inner.status.send_if_modified(|status| {
            let changed = status.expiries != expiries || reauthorized;
            status.expiries = expiries;
            if reauthorized {
                status.reauthorized += 1;
            }
            changed
        });
    }

    async fn read_file(&self) -> Result<Option<StoreFile>, String> {
        let path = self.inner.path.clone();
        let read = tokio::task::spawn_blocking(move || read_store(&path))
            .await
            .map_err(|_| "reading the credential store was cancelled".to_owned())?;
        let (file, stamp) = read?;
        *self.inner.seen.lock_unpoisoned() = stamp;
        self.follow_dpop_key(file.as_ref());
        if let Some(secret) = file
            .as_ref()
            .and_then(|f| f.registration.as_ref()?.client_secret.clone())
        {
            crate::secret::remember([crate::secret::Secret::new(secret)]);
        }
        Ok(file)
    }

    /// The registration kept in the file, if any.
    pub(crate) async fn registration(&self) -> Result<Option<Registration>, String> {
        Ok(self.read_file().await?.and_then(|f| f.registration))
    }

    /// The scopes a server asked for beyond the grant, and the scopes granted so far.
    pub(crate) async fn scopes(&self) -> (Vec<String>, Vec<String>) {
        match self.read_file().await {
            Ok(Some(file)) => (file.credentials.granted_scopes, file.step_up),
            _ => (Vec::new(), Vec::new()),
        }
    }

    /// Keeps `registration` in the file (tokens of another client are dropped with it: they
    /// cannot be refreshed by this one).
    pub(crate) async fn save_registration(&self, registration: Registration) -> Result<(), String> {
        let previous = self.read_file().await.ok().flatten();
        let (credentials, refresh_token_expires_at, step_up) = match previous {
            Some(file) if file.credentials.client_id == registration.client_id => (
                file.credentials,
                file.refresh_token_expires_at,
                file.step_up,
            ),
            Some(file) => (
                StoredCredentials::new(registration.client_id.clone(), None, Vec::new(), None),
                None,
                file.step_up,
            ),
            None => (
                StoredCredentials::new(registration.client_id.clone(), None, Vec::new(), None),
                None,
                Vec::new(),
            ),
        };
        self.write(StoreFile {
            credentials,
            refresh_token_expires_at,
            registration: Some(registration),
            step_up,
            dpop_key: None,
        })
        .await
    }

    /// Remembers that the server asked for `scopes` (space-separated) beyond the grant.
    pub(crate) async fn save_step_up(&self, scopes: &str) -> Result<(), String> {
        let Some(mut file) = self.read_file().await? else {
            return Ok(());
        };
        let before = file.step_up.len();
        for scope in scopes.split_whitespace() {
            if !file.step_up.iter().any(|s| s == scope)
                && !file.credentials.granted_scopes.iter().any(|s| s == scope)
            {
                file.step_up.push(scope.to_owned());
            }
        }
        if let Some(token) = access_fingerprint(&file.credentials) {
            *self.inner.problem.lock_unpoisoned() = Some(Problem::StepUp { token });
        }
        if file.step_up.len() == before {
            return Ok(());
        }
        self.write(file).await
    }

    /// The DPoP key the tokens are (to be) bound to: the file's as last read, else a new one,
    /// saved with the next tokens.
    pub(crate) fn dpop_key(&self) -> Result<Arc<super::dpop_key::DpopKey>, String> {
        let mut slot = self.inner.dpop.lock_unpoisoned();
        if let Some(key) = &slot.key {
            return Ok(key.clone());
        }
        let key = Arc::new(super::dpop_key::DpopKey::generate()?);
        *slot = DpopSlot {
            key: Some(key.clone()),
            pending: true,
        };
        Ok(key)
    }

    /// A new DPoP key for the tokens a login is about to request (the key rotates with the
    /// credentials); saved with them.
    pub(crate) fn rotate_dpop_key(&self) -> Result<(), String> {
        let key = Arc::new(super::dpop_key::DpopKey::generate()?);
        *self.inner.dpop.lock_unpoisoned() = DpopSlot {
            key: Some(key),
            pending: true,
        };
        Ok(())
    }

    /// Follows the key of the file just read, unless tokens for a new key are being requested.
    fn follow_dpop_key(&self, file: Option<&StoreFile>) {
        let mut slot = self.inner.dpop.lock_unpoisoned();
        if slot.pending {
            return;
        }
        let stored = file.and_then(|f| f.dpop_key.as_deref());
        if slot.key.as_ref().map(|k| k.stored()) == stored {
            return;
        }
        slot.key = stored.and_then(|s| match super::dpop_key::DpopKey::from_stored(s) {
            Ok(key) => Some(Arc::new(key)),
            Err(why) => {
                tracing::warn!(
                    store = %self.inner.path.display(),
                    "the DPoP key in the credential store cannot be used ({why}); a new one is \
                     made for the next tokens"
                );
                None
            }
        });
    }

    async fn write(&self, mut file: StoreFile) -> Result<(), String> {
        {
            // The file keeps the key its tokens are bound to.
            let mut slot = self.inner.dpop.lock_unpoisoned();
            if let Some(key) = &slot.key {
                file.dpop_key = Some(key.stored().to_owned());
            }
            slot.pending = false;
        }
        let path = self.inner.path.clone();
        let (file, written) = tokio::task::spawn_blocking(move || {
            let written = write_store(&path, &file);
            (file, written)
        })
        .await
        .map_err(|_| "writing the credential store was cancelled".to_owned())?;
        *self.inner.seen.lock_unpoisoned() = written?;
        self.record(Some(&file), empty(&file));
        Ok(())
    }
}

impl FileStore {
    /// Saves `credentials` (the login command and rmcp's token exchanges both come here).
    pub(crate) async fn save_credentials(
        &self,
        credentials: StoredCredentials,
    ) -> Result<(), String> {
        let previous = self.read_file().await.ok().flatten();
        let refresh_token_expires_at = refresh_lifetime_from_response(&credentials).or_else(|| {
            // A refresh that kept the refresh token keeps what we knew of its lifetime.
            let previous = previous.as_ref()?;
            (refresh_fingerprint(&previous.credentials)? == refresh_fingerprint(&credentials)?)
                .then(|| refresh_expires_at(previous))
                .flatten()
        });
        let (registration, step_up) = match previous {
            Some(previous) => {
                // A login that was granted what the server asked for has no step-up left.
                let granted = &credentials.granted_scopes;
                let step_up = previous
                    .step_up
                    .into_iter()
                    .filter(|s| !granted.contains(s))
                    .collect();
                (previous.registration, step_up)
            }
            None => (None, Vec::new()),
        };
        self.write(StoreFile {
            credentials,
            refresh_token_expires_at,
            registration,
            step_up,
            dpop_key: None,
        })
        .await
    }
}

/// [`Problem::Empty`] for a file that holds no token.
fn empty(file: &StoreFile) -> Option<Problem> {
    file.credentials
        .token_response
        .is_none()
        .then_some(Problem::Empty)
}

#[async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match self.read_file().await {
            Ok(Some(file)) => {
                self.record(Some(&file), empty(&file));
                Ok(Some(file.credentials))
            }
            Ok(None) => {
                self.record(None, Some(Problem::Empty));
                Ok(None)
            }
            Err(why) => {
                self.record(None, Some(Problem::Broken(why.clone())));
                Err(AuthError::CredentialStoreError(why))
            }
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.save_credentials(credentials)
            .await
            .map_err(AuthError::CredentialStoreError)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let path = self.inner.path.clone();
        let removed = tokio::task::spawn_blocking(move || match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        })
        .await;
        if let Ok(Err(e)) = removed {
            return Err(AuthError::CredentialStoreError(format!(
                "cannot remove the credential store `{}`: {e}",
                self.inner.path.display()
            )));
        }
        self.record(None, Some(Problem::Empty));
        Ok(())
    }

    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        let token = refresh_fingerprint(credentials).unwrap_or_default();
        *self.inner.problem.lock_unpoisoned() = Some(Problem::RefreshRefused { token });
        self.inner.status.send_if_modified(|status| {
            let changed = !status.expiries.is_empty();
            status.expiries.clear();
            changed
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcp-readiness-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A store at `file` in a fresh scratch directory `name`, and its status feed.
    fn store_in(name: &str, file: &str) -> (PathBuf, FileStore, watch::Receiver<CredentialState>) {
        let dir = dir(name);
        let store = FileStore::new(dir.join(file));
        let status = store.subscribe();
        (dir, store, status)
    }

    fn credentials(refresh: &str, received_at: u64, extra: &str) -> StoredCredentials {
        serde_json::from_str(&format!(
            r#"{{"client_id":"cid","token_received_at":{received_at},"token_response":
               {{"access_token":"AT-secret-value-1","token_type":"bearer","expires_in":300,
                 "refresh_token":"{refresh}"{extra}}}}}"#
        ))
        .unwrap()
    }

    fn unix(expiry: &CredentialExpiry) -> u64 {
        expiry.unix_seconds() as u64
    }

    #[tokio::test]
    async fn a_dpop_key_is_kept_with_its_tokens_privately_and_rotates_with_a_login() {
        let dir = dir("dpop");
        let path = dir.join("vault.json");
        let store = FileStore::new(path.clone());
        // A store without DPoP has no key, and gets none by being read and written.
        store.save(credentials("RT-1", 1_000, "")).await.unwrap();
        assert!(!std::fs::read_to_string(&path).unwrap().contains("dpop_key"));
        // The first DPoP token request makes the key; it is saved with the tokens.
        let key = store.dpop_key().unwrap();
        // A read before the tokens are saved keeps the key being used.
        store.load().await.unwrap();
        assert_eq!(store.dpop_key().unwrap().stored(), key.stored());
        store.save(credentials("RT-2", 1_000, "")).await.unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(&format!(r#""dpop_key": "{}""#, key.stored())));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        // Another process (the hub) follows the file's key.
        let hub = FileStore::new(path.clone());
        hub.load().await.unwrap();
        assert_eq!(hub.dpop_key().unwrap().stored(), key.stored());
        // A login rotates it: its tokens are saved with a new key, which the hub then follows.
        store.rotate_dpop_key().unwrap();
        let rotated = store.dpop_key().unwrap();
        assert_ne!(rotated.stored(), key.stored());
        store.save(credentials("RT-3", 2_000, "")).await.unwrap();
        hub.load().await.unwrap();
        assert_eq!(hub.dpop_key().unwrap().stored(), rotated.stored());
        // Step-ups and registrations keep the key of the tokens.
        store.save_step_up("admin").await.unwrap();
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .contains(rotated.stored())
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_saved_store_is_private_and_its_expiries_are_the_token_responses() {
        let (dir, store, status) = store_in("saved", "sub/vault.json");
        store
            .save(credentials(
                "RT-1",
                1_000,
                r#","refresh_token_expires_in":86400"#,
            ))
            .await
            .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&dir.join("sub/vault.json")), 0o600);
            assert_eq!(mode(&dir.join("sub")), 0o700);
        }
        let expiries = status.borrow().expiries.clone();
        assert_eq!(expiries.len(), 2);
        assert_eq!(expiries[0].kind, CredentialKind::AccessToken);
        assert_eq!((unix(&expiries[0]), expiries[0].renewable), (1_300, true));
        assert_eq!(expiries[1].kind, CredentialKind::RefreshToken);
        assert_eq!((unix(&expiries[1]), expiries[1].renewable), (87_400, false));
        let loaded = store.load().await.unwrap().unwrap();
        assert_eq!(loaded.client_id, "cid");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_refresh_that_keeps_the_refresh_token_keeps_its_known_lifetime_and_a_new_one_forgets_it()
     {
        let (dir, store, status) = store_in("kept", "vault.json");
        store
            .save(credentials(
                "RT-1",
                1_000,
                r#","refresh_token_expires_in":500"#,
            ))
            .await
            .unwrap();
        store.save(credentials("RT-1", 1_200, "")).await.unwrap();
        let expiries = status.borrow().expiries.clone();
        assert_eq!(unix(&expiries[0]), 1_500, "the new access token");
        assert_eq!(
            unix(&expiries[1]),
            1_500,
            "the same refresh token, same lifetime"
        );
        store.save(credentials("RT-2", 1_300, "")).await.unwrap();
        let expiries = status.borrow().expiries.clone();
        assert_eq!(
            expiries.len(),
            1,
            "a rotated refresh token of unknown lifetime: {expiries:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn an_access_token_without_a_refresh_token_cannot_renew_itself() {
        let dir = dir("norefresh");
        let store = FileStore::new(dir.join("vault.json"));
        let mut creds = credentials("x", 1_000, "");
        creds
            .token_response
            .as_mut()
            .unwrap()
            .set_refresh_token(None);
        store.save(creds).await.unwrap();
        let expiries = store.subscribe().borrow().expiries.clone();
        assert_eq!(expiries.len(), 1);
        assert!(!expiries[0].renewable);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_store_open_to_other_users_is_refused_with_the_chmod_to_run() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = dir("loose");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("vault.json");
        let valid = serde_json::to_string(&credentials("RT-1", 1_000, "")).unwrap();
        std::fs::write(&path, valid).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let store = FileStore::new(path.clone());
        let err = store.load().await.unwrap_err().to_string();
        assert!(
            err.contains("mode 0644") && err.contains(&format!("chmod 600 {}", path.display())),
            "{err}"
        );
        assert!(store.problem("run `x`").unwrap().contains("chmod 600"));
        // Fixed: the store counts as re-authorized (the server may try again).
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        store.load().await.unwrap();
        assert_eq!(store.problem("run `x`"), None);
        assert_eq!(store.subscribe().borrow().reauthorized, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_malformed_store_names_the_line_and_column_and_never_its_content() {
        let dir = dir("malformed");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("vault.json");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        use std::io::Write as _;
        options
            .open(&path)
            .unwrap()
            .write_all(br#"{"client_id": "c", "token_response": "LEAKED-token-9f8e7d"}"#)
            .unwrap();
        let err = FileStore::new(path).load().await.unwrap_err().to_string();
        assert!(err.contains("line 1 column"), "{err}");
        assert!(!err.contains("LEAKED"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_missing_store_holds_no_tokens_and_says_what_to_run() {
        let store = FileStore::new(dir("missing").join("vault.json"));
        assert!(store.load().await.unwrap().is_none());
        let problem = store.problem("run `mcp-readiness oauth login`").unwrap();
        assert!(
            problem.contains("holds no tokens") && problem.contains("oauth login"),
            "{problem}"
        );
    }

    #[tokio::test]
    async fn a_refused_refresh_token_is_the_reason_until_the_store_holds_another() {
        let (dir, store, status) = store_in("refused", "vault.json");
        let first = credentials("RT-1", 1_000, "");
        store.save(first.clone()).await.unwrap();
        assert_eq!(store.problem("run `login`"), None);
        store.on_refresh_token_rejected(&first).await.unwrap();
        let problem = store.problem("run `login`").unwrap();
        assert!(problem.contains("refused the refresh token") && problem.contains("run `login`"));
        assert!(
            status.borrow().expiries.is_empty(),
            "refused credentials expire no more"
        );
        // Reading the same file again does not forget the refusal.
        store.load().await.unwrap();
        assert!(store.problem("run `login`").is_some());
        assert_eq!(status.borrow().reauthorized, 0);
        // A re-authorization writes another refresh token: the server may try again.
        store.save(credentials("RT-2", 2_000, "")).await.unwrap();
        assert_eq!(store.problem("run `login`"), None);
        assert_eq!(status.borrow().reauthorized, 1);
        assert_eq!(status.borrow().expiries.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The storm of issue 38: a server that keeps answering `403 insufficient_scope` to a
    /// client-credentials token renewed every few seconds. Each renewal rewrote the store and
    /// was taken for a re-authorization (17 flips out of `unauthenticated` in 21 s). A renewal
    /// whose grant lacks the scope changes nothing; one that carries it clears the step-up.
    #[tokio::test]
    async fn a_renewal_without_the_step_up_scope_is_not_a_reauthorization_and_one_with_it_is() {
        let (dir, store, status) = store_in("step-up-renewal", "job.json");
        let granted = |access: &str, scopes: &[&str]| {
            let mut creds: StoredCredentials = serde_json::from_str(&format!(
                r#"{{"client_id":"cid","token_received_at":1000,"token_response":
                   {{"access_token":"{access}","token_type":"bearer","expires_in":3}}}}"#
            ))
            .unwrap();
            creds.granted_scopes = scopes.iter().map(|s| (*s).to_owned()).collect();
            creds
        };
        store.save(granted("AT-1", &["tools"])).await.unwrap();
        store.save_step_up("tools admin").await.unwrap();
        assert!(store.problem("run `login`").is_some());
        for (i, access) in ["AT-2", "AT-3", "AT-4"].into_iter().enumerate() {
            store.save(granted(access, &["tools"])).await.unwrap();
            store.load().await.unwrap();
            assert!(
                store.problem("run `login`").is_some(),
                "renewal {i} without `admin` ended the step-up"
            );
            assert_eq!(status.borrow().reauthorized, 0, "renewal {i}");
        }
        store
            .save(granted("AT-5", &["tools", "admin"]))
            .await
            .unwrap();
        assert_eq!(store.problem("run `login`"), None);
        assert_eq!(status.borrow().reauthorized, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_step_up_says_log_in_again_for_a_login_grant_and_grant_the_client_the_scopes_for_one_the_hub_renews()
     {
        let dir = dir("step-up-words");
        let token = || -> StoredCredentials {
            serde_json::from_str(
                r#"{"client_id":"cid","token_received_at":1000,"token_response":
                   {"access_token":"AT","token_type":"bearer","expires_in":300}}"#,
            )
            .unwrap()
        };
        // The reason a store asking for `admin` gives: a login's, or a renewing grant's.
        let step_up = |store: FileStore| async move {
            store.save(token()).await.unwrap();
            store.save_step_up("admin").await.unwrap();
            let words = store.problem("run `mcp-readiness oauth login`").unwrap();
            (store, words)
        };
        let (_login, words) = step_up(FileStore::new(dir.join("login.json"))).await;
        assert!(
            words.contains("re-authorize") && words.contains("oauth login"),
            "{words}"
        );

        let (_machine, words) =
            step_up(FileStore::with_renewal(dir.join("machine.json"), true)).await;
        assert!(
            words.contains("grant this client those scopes") && words.contains("no login needed"),
            "{words}"
        );
        assert!(
            !words.contains("oauth login") && !words.contains("re-authorize"),
            "{words}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
