
BoutputJ$ìÌdQQjIôR!Ô½ÑS¶Ğ¶Ğ{QN;RqN½ÑOÔ‘UdQ