import type { Diagnoser } from "../../../src/diagnosis/diagnoser.js";
import type { DiagnosisContext, DiagnosisResult } from "../../../src/diagnosis/types.js";

/**
 * TEST DOUBLE: answers every photo with the same canned result so the HTTP layer can be tested without the
 * model. Never used by the running service (src/server.ts builds the real core).
 */
export class StubDiagnoser implements Diagnoser {
  readonly calls: { image: Buffer; context: DiagnosisContext; requestId: string }[] = [];
  ready = true;
  /** When set, diagnose() rejects with it (to test the error mapping). */
  failWith: Error | undefined;

  async diagnose(image: Buffer, context: DiagnosisContext, requestId: string): Promise<DiagnosisResult> {
    this.calls.push({ image, context, requestId });
    if (this.failWith) throw this.failWith;
    return cannedResult(requestId, context.includeBbox);
  }

  modelReady(): boolean {
    return this.ready;
  }

  async close(): Promise<void> {}
}

export function cannedResult(requestId: string, includeBbox: boolean): DiagnosisResult {
  return {
    request_id: requestId,
    image_analysis: { is_plant: true, quality_issue: null, detected_crop: "tomato" },
    is_plant: true,
    crop_health: "unhealthy",
    outcome: "diagnosed",
    candidates: [{ id: "tomato__late_blight", name: "Late blight", confidence: 0.91 }],
    diagnoses: [
      {
        id: "tomato__late_blight",
        scientific_name: "Phytophthora infestans",
        eppo_code: "PHYTIN",
        name: "Late blight",
        category: "oomycete",
        confidence: 0.91,
        urgency: "high",
        description: "Stub",
        affected_parts: ["leaves"],
        reference_images: ["https://example.org/late-blight.jpg"],
      },
    ],
    treatment: {
      immediate_actions: ["Remove infected leaves"],
      recommended_products: [],
      natural_alternatives: [],
      prevention: [],
      urgency: "high",
    },
    detections: includeBbox ? [{ name: "late_blight", bbox: [0.1, 0.2, 0.3, 0.4], confidence: 0.8 }] : null,
    additional_notes: null,
    error: null,
  };
}
