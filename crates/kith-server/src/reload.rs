//! API keys that change without a restart: `kill -HUP` makes `kith serve`
//! read its keys again (`--keys-file`, `KITH_API_KEYS`) and use them for
//! every request from then on. Connections stay open and requests in flight
//! finish with the keys they started with; a new key set that cannot be
//! read (or is empty) is refused with a log line and the old one stays.

use std::sync::{Arc, RwLock};

use crate::auth::{ApiKeys, Auth};

/// Reads the key set again; the error is a sentence for the log.
pub type KeyLoader = Arc<dyn Fn() -> Result<ApiKeys, String> + Send + Sync>;

/// The server's auth, replaceable while it serves.
#[derive(Debug)]
pub struct SharedAuth(RwLock<Arc<Auth>>);

impl SharedAuth {
    /// Starts with `auth`.
    pub fn new(auth: Auth) -> Self {
        SharedAuth(RwLock::new(Arc::new(auth)))
    }

    /// The auth a request is checked against now.
    pub fn current(&self) -> Arc<Auth> {
        // A panic cannot leave a half-written Arc behind: the value is good.
        Arc::clone(&self.0.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Uses `keys` from now on; returns how many there are. Refused (and
    /// nothing changes) for an empty set, which would lock everyone out,
    /// and on a server started without keys, whose owners come from a
    /// header and which may listen on loopback only.
    pub fn replace_keys(&self, keys: ApiKeys) -> Result<usize, String> {
        if keys.is_empty() {
            return Err("the new key set is empty; keeping the keys in use".into());
        }
        let mut current = self.0.write().unwrap_or_else(|p| p.into_inner());
        if matches!(**current, Auth::Open { .. }) {
            return Err("this server was started without API keys; restart it to use keys".into());
        }
        let n = keys.len();
        *current = Arc::new(Auth::Keys(keys));
        Ok(n)
    }
}

/// Reloads the keys with `loader` on every SIGHUP until the runtime stops.
/// The handler is installed by this call, not when the future first runs:
/// a SIGHUP that arrives once the caller goes on reloads the keys instead
/// of ending the process (SIGHUP's default action). Call it inside the
/// runtime.
#[cfg(unix)]
pub fn on_sighup(
    auth: Arc<SharedAuth>,
    loader: KeyLoader,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{signal, SignalKind};
    let hangups = signal(SignalKind::hangup());
    async move {
        let Ok(mut hangups) = hangups else {
            tracing::warn!("cannot listen for SIGHUP: keys are reloaded only by a restart");
            return;
        };
        while hangups.recv().await.is_some() {
            let loader = Arc::clone(&loader);
            // Reading a file: off the reactor.
            let loaded = tokio::task::spawn_blocking(move || loader())
                .await
                .unwrap_or_else(|e| Err(format!("the reload task failed: {e}")));
            match loaded.and_then(|keys| auth.replace_keys(keys)) {
                Ok(n) => tracing::info!("SIGHUP: reloaded {n} API key(s)"),
                Err(why) => tracing::error!("SIGHUP: keys not reloaded: {why}"),
            }
        }
    }
}

/// Without SIGHUP, keys change only by a restart.
#[cfg(not(unix))]
pub fn on_sighup(
    _auth: Arc<SharedAuth>,
    _loader: KeyLoader,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    std::future::ready(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kith::OwnerId;

    fn keys(text: &str) -> ApiKeys {
        ApiKeys::parse_env(text).expect("test keys")
    }

    #[test]
    fn keys_are_replaced_but_never_by_nothing() {
        let shared = SharedAuth::new(Auth::Keys(keys("key-for-alice-0123456789:alice")));
        assert_eq!(
            shared.replace_keys(keys(
                "key-for-alice-0123456789:alice,key-for-bob-00123456789:bob"
            )),
            Ok(2)
        );
        assert!(matches!(&*shared.current(), Auth::Keys(k) if k.len() == 2));
        let err = shared.replace_keys(ApiKeys::default()).unwrap_err();
        assert!(err.contains("empty"), "{err}");
        assert!(matches!(&*shared.current(), Auth::Keys(k) if k.len() == 2));
    }

    #[test]
    fn a_keyless_server_stays_keyless() {
        let shared = SharedAuth::new(Auth::Open {
            default_owner: OwnerId::new("alice").expect("valid"),
        });
        let err = shared
            .replace_keys(keys("key-for-alice-0123456789:alice"))
            .unwrap_err();
        assert!(err.contains("without API keys"), "{err}");
        assert!(matches!(&*shared.current(), Auth::Open { .. }));
    }
}
