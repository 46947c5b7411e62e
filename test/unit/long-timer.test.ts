import { afterEach, describe, expect, it, vi } from 'vitest'
import { longTimeout, TIMER_LIMIT_MS } from '../../src/long-timer.js'

const DAY = 86_400_000

describe('longTimeout', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('does not fire at once for a delay past what a timer holds (a plain setTimeout does)', async () => {
    let long = 0
    let plain = 0
    const timer = longTimeout(() => long++, 30 * DAY)
    // The control: node and bun run a delay over 2^31 - 1 ms after about one millisecond.
    const control = setTimeout(() => plain++, 30 * DAY)
    await vi.waitFor(() => expect(plain).toBe(1), { timeout: 60_000 })
    clearTimeout(control)
    // Set before the control with the same (overflowed) delay, a misfiring timer would have run before it.
    timer.clear()
    expect(long).toBe(0)
  })

  it('fires once, at the due time, across as many timers as it takes', () => {
    vi.useFakeTimers({ now: 0 })
    let fired = 0
    longTimeout(() => fired++, 30 * DAY)
    vi.advanceTimersByTime(TIMER_LIMIT_MS)
    expect(fired).toBe(0)
    vi.advanceTimersByTime(30 * DAY - TIMER_LIMIT_MS - 1)
    expect(fired).toBe(0)
    vi.advanceTimersByTime(1)
    expect(fired).toBe(1)
    vi.advanceTimersByTime(60 * DAY)
    expect(fired).toBe(1)
  })

  it('a short delay fires as setTimeout would; clear stops it', () => {
    vi.useFakeTimers({ now: 0 })
    let fired = 0
    longTimeout(() => fired++, 1500)
    const cleared = longTimeout(() => fired++, 1500)
    cleared.clear()
    vi.advanceTimersByTime(1499)
    expect(fired).toBe(0)
    vi.advanceTimersByTime(1)
    expect(fired).toBe(1)
  })
})
