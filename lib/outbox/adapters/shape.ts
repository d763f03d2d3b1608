/** Whether `value[key]` is a function. */
export function hasFunction(value: object, key: string): boolean {
  return typeof (value as Record<string, unknown>)[key] === 'function';
}

/** `value[key]`, read without the type system's help (the objects are another library's). */
export function field(value: object, key: string | symbol): unknown {
  return (value as Record<string | symbol, unknown>)[key];
}

/** `value[key]` when it is an object, else undefined. */
export function objectField(value: object, key: string | symbol): object | undefined {
  const found = field(value, key);
  return typeof found === 'object' && found !== null ? found : undefined;
}
