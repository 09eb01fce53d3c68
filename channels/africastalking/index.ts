export { createAfricasTalkingAdapter } from "./send.js";
export { ussdRespond } from "./ussd-menu.js";
export { AT_PATH_PREFIX, africasTalkingWebhook, ipAllowList, parseAfricasTalkingSms } from "./webhook.js";
