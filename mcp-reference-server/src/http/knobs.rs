//! How the HTTP front is configured: the options of a well-behaved server
//! ([`HttpOptions`]) and the ways it can misbehave ([`HttpKnob`]).

use std::time::Duration;

use crate::Methods;

/// A way for the HTTP front to misbehave, as real servers and the
/// proxies before them do. Each applies to the POSTs whose JSON-RPC method
/// its [`Methods`] covers, unless it says otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpKnob {
    /// Answer with `502 Bad Gateway` and an HTML page, as a proxy in front
    /// of a dead server does. The message is not handed to the server.
    BadGateway(Methods),
    /// Take the request and never send the response head.
    NeverRespond(Methods),
    /// Write SSE bodies one byte at a time, this long apart.
    Drip(Methods, Duration),
    /// Pad the answer (a `padding` string in its result) until its event
    /// or JSON body is over this many bytes.
    Oversized(Methods, usize),
    /// Answer as JSON, then keep the body open, never ending it.
    EndlessBody(Methods),
    /// Answer as JSON with this `Content-Type` (`None`: no header at all).
    ContentType(Methods, Option<String>),
    /// Redirect (307) to this URL, typically on another origin.
    Redirect(Methods, String),
    /// (Legacy.) Send an event with an id and `retry:` this long on the
    /// POST stream, then close the stream before the answer, so that the
    /// client resumes with `GET` and `Last-Event-ID` (the answer comes on
    /// the resumed stream).
    DropStream(Methods, Duration),
    /// (Legacy.) A `GET` with `Last-Event-ID` gets a stream that ends at
    /// once with nothing.
    ResumeEmpty,
    /// Answer `server/discover` without a session with `400` and a
    /// `-32000` "Server not initialized" body, as server-everything does.
    DiscoverNotInitialized,
    /// Answer a request naming an unknown or expired session with `400`
    /// instead of `404`, as server-everything does.
    UnknownSessionIs400,
    /// (Legacy.) Each session expires after serving this many requests:
    /// the next one gets `404`.
    ExpireSessionsAfter(u32),
}

impl HttpKnob {
    /// Reads a knob as the binary's `--http-knob` takes it: `bad-gateway`,
    /// `never-respond`, `drip=MS`, `oversized=BYTES`, `endless-body`,
    /// `content-type=TYPE` (`content-type=` for none), `redirect=URL`,
    /// `drop-stream=RETRY_MS`, `resume-empty`, `discover-not-initialized`,
    /// `unknown-session-400`, `expire-after=N`; those applying to methods
    /// take `@METHOD` at the end (default: every method).
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_reference_server::Methods;
    /// use mcp_reference_server::http::HttpKnob;
    ///
    /// assert_eq!(
    ///     HttpKnob::parse("drip=5@tools/call"),
    ///     Ok(HttpKnob::Drip(Methods::Named("tools/call".into()), Duration::from_millis(5)))
    /// );
    /// assert_eq!(HttpKnob::parse("resume-empty"), Ok(HttpKnob::ResumeEmpty));
    /// ```
    pub fn parse(text: &str) -> Result<HttpKnob, String> {
        let (text, methods) = match text.rsplit_once('@') {
            Some((t, m)) => (t, Methods::parse(m)),
            None => (text, Methods::All),
        };
        let (name, arg) = match text.split_once('=') {
            Some((n, a)) => (n, Some(a)),
            None => (text, None),
        };
        let need = |what: &str| arg.ok_or_else(|| format!("{name} needs ={what}"));
        let number = |what: &str| -> Result<u64, String> {
            let a = need(what)?;
            a.parse().map_err(|_| format!("{a:?} is not a number"))
        };
        Ok(match name {
            "bad-gateway" => HttpKnob::BadGateway(methods),
            "never-respond" => HttpKnob::NeverRespond(methods),
            "drip" => HttpKnob::Drip(methods, Duration::from_millis(number("MS")?)),
            "oversized" => HttpKnob::Oversized(methods, number("BYTES")? as usize),
            "endless-body" => HttpKnob::EndlessBody(methods),
            "content-type" => {
                let t = need("TYPE")?;
                HttpKnob::ContentType(methods, (!t.is_empty()).then(|| t.to_owned()))
            }
            "redirect" => HttpKnob::Redirect(methods, need("URL")?.to_owned()),
            "drop-stream" => HttpKnob::DropStream(methods, Duration::from_millis(number("MS")?)),
            "resume-empty" => HttpKnob::ResumeEmpty,
            "discover-not-initialized" => HttpKnob::DiscoverNotInitialized,
            "unknown-session-400" => HttpKnob::UnknownSessionIs400,
            "expire-after" => HttpKnob::ExpireSessionsAfter(number("N")? as u32),
            other => return Err(format!("unknown HTTP knob {other:?}")),
        })
    }

    /// The methods it applies to, for the knobs that take some.
    pub(super) fn methods(&self) -> Option<&Methods> {
        match self {
            HttpKnob::BadGateway(m)
            | HttpKnob::NeverRespond(m)
            | HttpKnob::Drip(m, _)
            | HttpKnob::Oversized(m, _)
            | HttpKnob::EndlessBody(m)
            | HttpKnob::ContentType(m, _)
            | HttpKnob::Redirect(m, _)
            | HttpKnob::DropStream(m, _) => Some(m),
            _ => None,
        }
    }
}

/// How the HTTP front behaves when it behaves: sessions, answer form, the
/// GET stream, `retry:`, and its misbehaviours.
///
/// ```
/// use std::time::Duration;
/// use mcp_reference_server::http::{HttpKnob, HttpOptions};
///
/// let options = HttpOptions::new()
///     .json_answers()
///     .retry(Duration::from_millis(200))
///     .knob(HttpKnob::UnknownSessionIs400);
/// assert!(options.json);
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct HttpOptions {
    /// (Legacy.) No sessions: no `Mcp-Session-Id` is given or asked for,
    /// every POST goes to one server, and `GET` gets `405`.
    pub stateless: bool,
    /// Answer requests with `application/json` instead of an SSE stream;
    /// what belongs to a request then goes on the GET stream.
    pub json: bool,
    /// (Legacy.) `GET` gets `405`: no stream for server messages.
    pub no_get_stream: bool,
    /// (Legacy.) Start every SSE stream with a priming event (an id, empty
    /// data) carrying `retry:` this long.
    pub retry: Option<Duration>,
    /// Refuse (`403`) a request whose `Host` or `Origin` names anything but
    /// a loopback host (`localhost`, `127.0.0.1`, `[::1]`, any port): the
    /// DNS-rebinding protection a local server owes the browsers around
    /// it. Off by default, so that tests may reach the server by any name.
    pub loopback_only: bool,
    /// Misbehaviours.
    pub knobs: Vec<HttpKnob>,
}

impl HttpOptions {
    /// The defaults: stateful sessions, SSE answers, a GET stream, no
    /// priming event, no misbehaviour.
    pub fn new() -> HttpOptions {
        HttpOptions::default()
    }

    /// No sessions (see [`HttpOptions::stateless`](#structfield.stateless)).
    pub fn stateless(mut self) -> HttpOptions {
        self.stateless = true;
        self
    }

    /// JSON answers (see [`HttpOptions::json`](#structfield.json)).
    pub fn json_answers(mut self) -> HttpOptions {
        self.json = true;
        self
    }

    /// `GET` gets `405`.
    pub fn no_get_stream(mut self) -> HttpOptions {
        self.no_get_stream = true;
        self
    }

    /// A priming event with `retry:` on every legacy SSE stream.
    pub fn retry(mut self, retry: Duration) -> HttpOptions {
        self.retry = Some(retry);
        self
    }

    /// Refuses other hosts and origins than loopback (see
    /// [`HttpOptions::loopback_only`](#structfield.loopback_only)).
    pub fn loopback_only(mut self) -> HttpOptions {
        self.loopback_only = true;
        self
    }

    /// Adds a misbehaviour.
    pub fn knob(mut self, knob: HttpKnob) -> HttpOptions {
        self.knobs.push(knob);
        self
    }

    /// Whether a knob is set.
    pub fn has_knob(&self, knob: &HttpKnob) -> bool {
        self.knobs.contains(knob)
    }

    /// The first knob covering `method` that `pick` selects.
    pub(super) fn find<'a, T>(
        &'a self,
        method: &str,
        pick: impl Fn(&'a HttpKnob) -> Option<T>,
    ) -> Option<T> {
        self.knobs
            .iter()
            .filter(|k| k.methods().is_none_or(|m| m.covers(method)))
            .find_map(pick)
    }
}
