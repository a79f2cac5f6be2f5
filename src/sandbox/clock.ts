/** The sandbox clock. Set to an instant, it keeps running from there (so consecutive entities still
 * get increasing timestamps); null returns to the wall clock. */
export class SandboxClock {
  private offsetMs = 0;

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  /** Unix seconds, as Razorpay timestamps are. */
  nowSec(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  set(unixMs: number | null): void {
    this.offsetMs = unixMs === null ? 0 : unixMs - Date.now();
  }

  /** How far the clock is moved from the wall clock (persisted with the sandbox's state). */
  offset(): number {
    return this.offsetMs;
  }

  setOffset(ms: number): void {
    this.offsetMs = ms;
  }
}
