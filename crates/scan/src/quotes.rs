//! JSON string structure, 16 octets at a time: where the quotes are, and the octets (`\`, controls, non-ASCII) a fast reader of plain JSON strings leaves to a full parser. CDXJ lines use it to find their `url` without a JSON parse.

/// The octets of `block` that are `"`, and those that a fast JSON string
/// reader leaves to a full parse (`\`, a control octet, or one of 0x80 and
/// above), each a bit (bit `i` for octet `i`): SSE2 compares, in every
/// x86_64 processor.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn quotes_and_specials(block: &[u8; 16]) -> (u32, u32) {
    use core::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of the x86_64 baseline, so its intrinsics
    // run on every x86_64 processor; the load reads the 16 octets of
    // `block`, unaligned.
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast());
        let quotes = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // Signed: below 0x20, or 0x80 and above.
        let low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        let special = _mm_or_si128(backslash, low);
        (_mm_movemask_epi8(quotes) as u32, _mm_movemask_epi8(special) as u32)
    }
}

/// [`quotes_and_specials`] elsewhere: the same bits from two 8-octet words.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn quotes_and_specials(block: &[u8; 16]) -> (u32, u32) {
    quotes_and_specials_swar(block)
}

/// [`quotes_and_specials`] 8 octets at a time in `u64` arithmetic (SWAR).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(crate) fn quotes_and_specials_swar(block: &[u8; 16]) -> (u32, u32) {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const fn splat(b: u8) -> u64 {
        0x0101_0101_0101_0101 * b as u64
    }
    // Exact per octet (no carry from one octet into the next): the high
    // bit of each octet of `x` that is zero.
    let zero = |x: u64| !(((x & LOW7) + LOW7) | x) & HIGH;
    // The high bits of the 8 octets as 8 bits, octet `i`'s as bit `i`.
    let pack =
        |m: u64| ((m >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32;
    let (mut quotes, mut special) = (0, 0);
    for (i, word) in block.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(word.try_into().expect("8 octets"));
        // An octet below 0x80 gains its high bit from adding 0x60
        // exactly when it is 0x20 or above.
        let control_or_high = (w | !((w & LOW7) + splat(0x60))) & HIGH;
        let backslash = zero(w ^ splat(b'\\'));
        quotes |= pack(zero(w ^ splat(b'"'))) << (8 * i);
        special |= pack(backslash | control_or_high) << (8 * i);
    }
    (quotes, special)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_finds_quotes_and_the_octets_left_to_the_parse() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for b in 0..=255u8 {
            for at in 0..16 {
                let mut block = [b'a'; 16];
                block[at] = b;
                let bit = 1 << at;
                let left = b == b'\\' || !(0x20..0x80).contains(&b);
                let want = (
                    if b == b'"' { bit } else { 0 },
                    if left { bit } else { 0 },
                );
                assert_eq!(
                    quotes_and_specials(&block),
                    want,
                    "{b:#x} at {at}"
                );
                assert_eq!(
                    quotes_and_specials_swar(&block),
                    want,
                    "{b:#x} at {at}"
                );
            }
        }
        // Random blocks, mostly of the octets that matter.
        let octets = b"\"\\ \x00\x1f\x20\x7f\x80\xffa{";
        for _ in 0..20_000 {
            let mut block = [0u8; 16];
            for b in &mut block {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *b = match state % 3 {
                    0 => (state >> 8) as u8,
                    _ => octets[(state >> 8) as usize % octets.len()],
                };
            }
            let quotes = (0..16).filter(|&i| block[i] == b'"');
            let left = (0..16).filter(|&i| {
                block[i] == b'\\' || !(0x20..0x80).contains(&block[i])
            });
            let want = (
                quotes.fold(0, |m, i| m | 1 << i),
                left.fold(0, |m, i| m | 1 << i),
            );
            assert_eq!(quotes_and_specials(&block), want, "{block:?}");
            assert_eq!(quotes_and_specials_swar(&block), want, "{block:?}");
        }
    }
}
