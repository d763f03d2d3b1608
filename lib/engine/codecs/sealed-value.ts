/**
 * A stored value a codec sealed (`~` and base64, see docs/codecs.md), as the engine hands it up:
 * the engine never opens one (codecs live above it); the queue opens it where it is read.
 */
export class SealedValue {
  constructor(readonly text: string) {}
}
