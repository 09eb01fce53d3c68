export const AFRICAS_TALKING = "africastalking";

/** An Africa's Talking farmer is their phone number (E.164), the same key on SMS, WhatsApp and USSD. */
export function africasTalkingFarmer(phoneNumber: string): string {
  return phoneNumber;
}

/** Africa's Talking's API host: its sandbox serves the "sandbox" application. */
export function africasTalkingApiRoot(username: string): string {
  return username === "sandbox" ? "https://api.sandbox.africastalking.com" : "https://api.africastalking.com";
}
