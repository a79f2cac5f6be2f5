/** A Map and a Set that remember which keys changed since their changes were last taken, so that
 * the state file (persistence/) writes only those. They see `set`, `add`, `delete` and `clear`; a
 * value changed in place (an entity's status) is invisible to them, so the code that changes it
 * says so with `markChanged`. */

export interface KeyChanges<K> {
  /** Everything went (clear) before the `keys` changed. */
  cleared: boolean;
  keys: Set<K>;
}

class ChangeLog<K> {
  private changes: KeyChanges<K> = { cleared: false, keys: new Set() };

  changed(key: K): void {
    this.changes.keys.add(key);
  }

  cleared(): void {
    this.changes = { cleared: true, keys: new Set() };
  }

  take(): KeyChanges<K> {
    const taken = this.changes;
    this.changes = { cleared: false, keys: new Set() };
    return taken;
  }
}

export class TrackedMap<K, V> extends Map<K, V> {
  private readonly log = new ChangeLog<K>();

  /** No initial entries: the base constructor would add them before `log` exists. */
  constructor() {
    super();
  }

  override set(key: K, value: V): this {
    super.set(key, value);
    this.log.changed(key);
    return this;
  }

  override delete(key: K): boolean {
    const had = super.delete(key);
    if (had) this.log.changed(key);
    return had;
  }

  override clear(): void {
    super.clear();
    this.log.cleared();
  }

  /** The value under `key` was changed in place. */
  markChanged(key: K): void {
    if (this.has(key)) this.log.changed(key);
  }

  takeChanges(): KeyChanges<K> {
    return this.log.take();
  }
}

export class TrackedSet<T> extends Set<T> {
  private readonly log = new ChangeLog<T>();

  constructor() {
    super();
  }

  override add(value: T): this {
    if (!this.has(value)) this.log.changed(value);
    return super.add(value);
  }

  override delete(value: T): boolean {
    const had = super.delete(value);
    if (had) this.log.changed(value);
    return had;
  }

  override clear(): void {
    super.clear();
    this.log.cleared();
  }

  takeChanges(): KeyChanges<T> {
    return this.log.take();
  }
}
