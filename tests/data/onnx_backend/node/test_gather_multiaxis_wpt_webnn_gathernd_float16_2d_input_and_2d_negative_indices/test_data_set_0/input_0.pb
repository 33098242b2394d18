
BinputJ !ФOФРФЉО‘UЅС{QRzR>Q…јMТҐUфRќQS