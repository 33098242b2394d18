
BoutputJ0¥UôR¶ÐdQQS{QRzR>QQSzR>Q{QRQSQS¥UôR!ÔOÔ