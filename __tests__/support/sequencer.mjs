import { relative } from 'node:path'
import Sequencer from '@jest/test-sequencer'

/**
 * The files that take longest, slowest first, as measured on a 2-core machine. Jest orders the
 * files it has not timed before (all of them in a first run, in CI or after a clone) by size, and
 * starts them before the ones it has timed: either way the chaos suite, the longest file by far,
 * could start among the last, one worker busy with it while the other has nothing left to run.
 */
const SLOWEST = [
  '__tests__/chaos/chaos.test.ts',
  '__tests__/integration/cli/bin.test.ts',
  '__tests__/unit/package.test.ts',
  '__tests__/integration/stores/dynamodb-store.contract.test.ts',
  '__tests__/integration/middleware/batch-hooks.test.ts',
  '__tests__/integration/modes/managed-instances.test.ts',
  '__tests__/unit/docs/snippets.test.ts',
  '__tests__/integration/per-record.test.ts'
]

/** The known slowest files first, in the order above; then the others, in Jest's order. */
export default class SlowestFirst extends Sequencer.default {
  sort (tests) {
    const ordered = super.sort(tests)
    const rank = (test) => {
      const at = SLOWEST.indexOf(relative(test.context.config.rootDir, test.path).split('\\').join('/'))
      return at === -1 ? SLOWEST.length : at
    }
    // A stable sort: the rest keep Jest's order.
    return ordered.map((test, index) => ({ test, index, rank: rank(test) }))
      .sort((a, b) => a.rank - b.rank || a.index - b.index)
      .map(({ test }) => test)
  }
}
