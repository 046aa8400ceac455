//! Owned and static byte buffers aligned for [`Rules::from_bytes`].
//!
//! [`Rules::from_bytes`]: crate::Rules::from_bytes

/// An owned byte buffer that starts at an 8-byte aligned address, for
/// loading a rules file read into memory (a memory map is already aligned).
///
/// # Example
///
/// ```
/// use robofilter::{AlignedBytes, Compiler, Rules};
///
/// let bytes = Compiler::new().compile(b"User-agent: *\nDisallow: /\n")?;
/// let aligned = AlignedBytes::from(&bytes[..]);
/// let rules = Rules::from_bytes(aligned.as_bytes())?;
/// assert!(!rules.matcher("bot")?.is_allowed(b"/x"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct AlignedBytes {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBytes {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[..self.len]
    }

    /// `len` zero octets, to be written in place.
    #[cfg(feature = "compile")]
    pub(crate) fn zeroed(len: usize) -> AlignedBytes {
        AlignedBytes { words: vec![0u64; len.div_ceil(8)], len }
    }

    /// The bytes, to write in place.
    #[cfg(feature = "compile")]
    pub(crate) fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.words)[..self.len]
    }
}

impl From<&[u8]> for AlignedBytes {
    fn from(bytes: &[u8]) -> AlignedBytes {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()]
            .copy_from_slice(bytes);
        AlignedBytes { words, len: bytes.len() }
    }
}

/// Embeds a rules file in the binary at an aligned address, for
/// [`Rules::from_bytes`](crate::Rules::from_bytes). Evaluates to a
/// `&'static [u8]`.
///
/// ```ignore
/// static RULES: &[u8] = robofilter::include_rules!("rules.bin");
/// let rules = robofilter::Rules::from_bytes(RULES)?;
/// ```
#[macro_export]
macro_rules! include_rules {
    ($path:expr) => {{
        #[repr(C, align(64))]
        struct Aligned<B: ?Sized>(B);
        static ALIGNED: &Aligned<[u8]> = &Aligned(*include_bytes!($path));
        &ALIGNED.0
    }};
}
