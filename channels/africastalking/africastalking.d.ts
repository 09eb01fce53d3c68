// The SDK ships no types: only the part we call is declared.
declare module "africastalking" {
  interface SmsRecipient {
    number: string;
    status: string;
    statusCode: number;
    messageId: string;
  }
  interface SmsResponse {
    SMSMessageData: { Message: string; Recipients: SmsRecipient[] };
  }
  interface AfricasTalkingClient {
    SMS: { send(params: { to: string | string[]; message: string; from?: string }): Promise<SmsResponse> };
  }
  export default function AfricasTalking(options: { username: string; apiKey: string }): AfricasTalkingClient;
}
