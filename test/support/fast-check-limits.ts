// The unit tier's property tests end within Jest's test timeout, failing ones included. They run
// synchronously, so Jest cannot stop them, and a property that fails on a free seed shrinks its
// counterexample for as long as shrinking finds smaller ones: 884 s in the fresh-clone CI run at
// 78f25a5 (recent-shift.unit.test.ts), half the CI budget. After 50 s fast-check stops and reports
// the failure with the smallest counterexample found so far (seed and path to replay it); a property
// that has not finished its runs by then fails too, as a slow asynchronous test does at 60 s.
import fc from 'fast-check';

fc.configureGlobal({ interruptAfterTimeLimit: 50_000, markInterruptAsFailure: true });
