export const TWILIO = "twilio";
export const TWILIO_API_ROOT = "https://api.twilio.com";

/** A Twilio farmer is their phone number (E.164), the same key on SMS, WhatsApp and USSD. */
export function twilioFarmer(address: string): string {
  return address.replace(/^whatsapp:/, "");
}
