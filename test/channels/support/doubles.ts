import type { Diagnoser } from "../../../src/diagnosis/diagnoser.js";
import type { DiagnosisContext, DiagnosisResult } from "../../../src/diagnosis/types.js";
import { resultFixture } from "./fixtures.js";

/**
 * Test double of the diagnosis core for tests about the conversation around a diagnosis (order, notices,
 * captions): it answers every photo with the same fixture result and records what it was asked.
 */
export class FixedDiagnoserDouble implements Diagnoser {
  readonly contexts: DiagnosisContext[] = [];
  constructor(private readonly result: Partial<DiagnosisResult> = {}) {}
  async diagnose(_image: Buffer, context: DiagnosisContext, requestId: string): Promise<DiagnosisResult> {
    this.contexts.push(context);
    return resultFixture({ ...this.result, request_id: requestId });
  }
  get calls() {
    return this.contexts.length;
  }
  modelReady = () => true;
  close = async () => {};
}
