//! The media of the fixtures: the smallest valid image and audio, which
//! the suite asks for ("a minimal test image", "a minimal test audio
//! file"), so that a client decoding them finds real files.

use serde_json::{Value, json};

use crate::content::base64;

/// A 1×1 red PNG: the suite asks for "a minimal test image".
pub(super) const RED_PIXEL_PNG: [u8; 69] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A minimal WAV: eight samples of silence, 8-bit mono at 8 kHz (a RIFF
/// header, a `fmt ` chunk and a `data` chunk).
pub(super) fn silent_wav() -> Vec<u8> {
    let samples = [0x80_u8; 8];
    let mut wav = Vec::with_capacity(44 + samples.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16_u32.to_le_bytes()); // the fmt chunk's size
    wav.extend_from_slice(&1_u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1_u16.to_le_bytes()); // one channel
    wav.extend_from_slice(&8000_u32.to_le_bytes()); // samples a second
    wav.extend_from_slice(&8000_u32.to_le_bytes()); // bytes a second
    wav.extend_from_slice(&1_u16.to_le_bytes()); // bytes a frame
    wav.extend_from_slice(&8_u16.to_le_bytes()); // bits a sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(&samples);
    wav
}

pub(super) fn image() -> Value {
    json!({ "type": "image", "data": base64(&RED_PIXEL_PNG), "mimeType": "image/png" })
}
