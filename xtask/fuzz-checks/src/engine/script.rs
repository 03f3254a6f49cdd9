//! The script a fuzz input is read as: one step after another, each
//! something the server or a caller does.

use arbitrary::{Arbitrary, Unstructured};

/// One thing the server or a caller does.
#[derive(Arbitrary, Debug)]
pub(super) enum Step {
    /// A caller makes a request: with a timeout (in tens of milliseconds,
    /// reset by progress), with a progress token, with the id of an
    /// earlier call.
    Call {
        timeout: Option<u8>,
        progress: bool,
        reuse: Option<u8>,
    },
    /// A caller cancels its request by its token.
    Cancel(u8),
    /// A caller drops its request's future.
    Drop(u8),
    /// The server answers one of the requests it has read.
    Answer { to: u8, how: How },
    /// The server answers an id it was never sent.
    Unknown(u8),
    /// Progress for one of the requests the server has read.
    Progress { to: u8 },
    /// A notification that belongs to no request.
    Notification,
    /// A request of the server's.
    ServerRequest(ServerMethod),
    /// The server cancels one of its requests.
    CancelServerRequest(u8),
    /// A line of up to 16 arbitrary bytes (its newlines taken out), after
    /// a start that may look like a message.
    Junk {
        start: JunkStart,
        len: u8,
        bytes: [u8; 16],
    },
    /// A line over the size limit, naming one of the requests the server
    /// has read or none.
    Oversized { to: Option<u8>, suffix: Suffix },
    /// Time passes, in milliseconds.
    Wait(u8),
    /// The server's stream ends.
    EndStream,
    /// The client closes the transport.
    Close,
}

/// How an answer is written.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(super) enum How {
    Result,
    /// The same answer on two lines.
    Twice,
    /// An error, its code -32000 less this.
    Error(u8),
    /// An error with a null id.
    NullIdError,
    /// A result holding a number JSON cannot hold.
    OutOfRange,
    /// The answer inside a batch, with a notification.
    Batch,
}

/// How a line of junk starts.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub(super) enum JunkStart {
    Nothing,
    /// The start of an answer to one of the first ids.
    Answer(u8),
    /// The start of a request of the server's.
    Request,
    /// A log line, as servers that print to stdout write.
    Log,
}

/// Which request the server sends.
#[derive(Arbitrary, Debug)]
pub(super) enum ServerMethod {
    /// Answered at once.
    Ping,
    /// Answered after 300 ms.
    Slow,
    /// Refused.
    Unknown,
}

/// How an oversized line ends.
#[derive(Arbitrary, Debug)]
pub(super) enum Suffix {
    Newline,
    /// The stream ends in the middle of the line.
    Cut,
}

/// Reads at most `max` steps.
pub(super) fn read(u: &mut Unstructured<'_>, max: usize) -> Vec<Step> {
    let mut steps = Vec::new();
    while steps.len() < max && !u.is_empty() {
        match Step::arbitrary(u) {
            Ok(step) => steps.push(step),
            Err(_) => break,
        }
    }
    steps
}

/// The bytes of a junk line, without its newline.
pub(super) fn junk(start: JunkStart, len: u8, bytes: [u8; 16]) -> Vec<u8> {
    let mut line = match start {
        JunkStart::Nothing => Vec::new(),
        JunkStart::Answer(n) => format!(r#"{{"jsonrpc":"2.0","id":{},"#, n % 4).into_bytes(),
        JunkStart::Request => br#"{"jsonrpc":"2.0","id":9,"method":"#.to_vec(),
        JunkStart::Log => b"INFO server started ".to_vec(),
    };
    line.extend_from_slice(&bytes[..usize::from(len) % 17]);
    line.retain(|&b| b != b'\n');
    line
}
