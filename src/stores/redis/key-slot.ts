/**
 * The Redis Cluster hash slot of a key
 * (https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#key-distribution-model):
 * CRC16 (XMODEM: polynomial 0x1021, initial value 0) of the key's bytes, modulo 16384; when
 * the key has a hash tag — a `{` followed later by a `}` with something between them, the
 * first such pair — only the tag is hashed. Used to group a bulk read by node.
 */
export const keySlot = (key: string): number => {
  let bytes = Buffer.from(key, 'utf8')
  const open = bytes.indexOf(0x7b) // {
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1) // }
    if (close > open + 1) bytes = bytes.subarray(open + 1, close)
  }
  return crc16(bytes) % 16384
}

const TABLE = Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8
  for (let bit = 0; bit < 8; bit++) crc = (crc & 0x8000) === 0 ? crc << 1 : (crc << 1) ^ 0x1021
  return crc & 0xffff
})

const crc16 = (bytes: Uint8Array): number => {
  let crc = 0
  for (const byte of bytes) crc = ((crc << 8) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number)) & 0xffff
  return crc
}
