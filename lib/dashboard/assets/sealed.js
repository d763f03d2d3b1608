// A value a codec sealed (see docs/codecs.md), as the page shows it when the server did not send
// it opened (the option revealSealedPayloads off, or no key here): its size and key id.

/** `encrypted, 120 bytes, key v1`, and why this app could not open it, when it could not. */
export function sealedText({ bytes, keyId, undecodable }) {
  const key = keyId === undefined ? '' : `, key ${keyId}`;
  const why = undecodable === undefined ? '' : ` (cannot be opened here: ${undecodable.replaceAll('-', ' ')})`;
  return `encrypted, ${bytes} bytes${key}${why}`;
}

/** The sealed description of `holder[field]` when the server left the value out; undefined when it sent it. */
export const withheld = (holder, field, sealed) => (sealed && !(field in holder) ? sealed : undefined);
