import { expect } from 'chai';
import { judge, type Finding } from './reconcile.js';

const problem = { reason: 'ServerUnreachable', message: 'server down' };

describe('reconcile: what the checks found becomes conditions and a next step', () => {
  const table: Array<[Finding, string, string, string, object]> = [
    // finding, Ready, Reachable, Ready message contains, outcome
    [{ found: 'healthy' }, 'True/Configured', 'True/HealthChecksPassed', 'ConfigMap cm; endpoints healthy', { result: 'ready', requeueAfterMs: 5000 }],
    [{ found: 'unreachable', problem }, 'False/Unreachable', 'False/ServerUnreachable', 'a health check failed: server down', { result: 'not-ready', retry: true }],
    [{ found: 'invalid', problem: { reason: 'InvalidClass', message: 'no such class' } }, 'False/InvalidClass', 'Unknown/NotProbed', 'no such class', { result: 'invalid' }],
    [{ found: 'secret-missing', secret: 's1' }, 'False/SecretMissing', 'Unknown/NotProbed', 'Secret s1 named by secretRef', { result: 'not-ready', retry: true }],
  ];
  for (const [finding, ready, reachable, message, outcome] of table) {
    it(`${finding.found}: Ready ${ready}, Reachable ${reachable}`, () => {
      const { conditions, outcome: next } = judge(finding, 'cm', 5000);
      expect(conditions.map((c) => `${c.status}/${c.reason}`)).to.deep.equal([ready, reachable]);
      expect(conditions.map((c) => c.type)).to.deep.equal(['Ready', 'Reachable']);
      expect(conditions[0]!.message).to.include(message);
      expect(next).to.deep.equal(outcome);
    });
  }
});
