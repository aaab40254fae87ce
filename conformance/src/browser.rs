//! The non-interactive "browser" of the auth scenarios: it opens the authorization URL the way a
//! person's browser would (one GET), and follows the authorization server's redirect back to the
//! client's loopback callback. It lives in this client only: `mcp-readiness oauth login` prints
//! the URL for a person.

use std::time::Duration;

/// Opens `url` and delivers the redirect it answers with to its `Location` (the loopback
/// callback of the login that is waiting for it). Errors are logged: the waiting login then
/// reports that no redirect came back.
pub(crate) fn open(url: &str) {
    let url = url.to_owned();
    tokio::spawn(async move {
        if let Err(err) = follow(&url).await {
            tracing::warn!("browser: {err}");
        }
    });
}

async fn follow(url: &str) -> Result<(), String> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| format!("building the HTTP client: {e}"))?;
    let response = http
        .get(url)
        .send()
        .await
        .map_err(|e| format!("opening the authorization URL: {e}"))?;
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            format!(
                "the authorization URL answered {} without a redirect",
                response.status()
            )
        })?
        .to_owned();
    // The redirect goes to the login's own listener, which answers with a short page.
    http.get(&location)
        .send()
        .await
        .map_err(|e| format!("following the redirect: {e}"))?;
    Ok(())
}
