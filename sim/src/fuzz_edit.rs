//! Byte edits of a fixture, the mutations the property tests of sim and calibrate (and the
//! `fuzz/` targets' seeds) feed to the readers.

/// One edit of a fixture: at `position` (taken modulo the length), `op` 0 replaces the byte
/// with `byte`, 1 inserts `byte`, 2 deletes the byte, 3 cuts the input there.
pub type Edit = (usize, u8, u8);

/// `fixture` with `edits` applied in order.
pub fn mutate(fixture: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut bytes = fixture.to_vec();
    for &(position, op, byte) in edits {
        let at = position % (bytes.len() + 1);
        match op {
            0 if at < bytes.len() => bytes[at] = byte,
            1 => bytes.insert(at, byte),
            2 if at < bytes.len() => {
                bytes.remove(at);
            }
            3 => bytes.truncate(at),
            _ => {}
        }
    }
    bytes
}
