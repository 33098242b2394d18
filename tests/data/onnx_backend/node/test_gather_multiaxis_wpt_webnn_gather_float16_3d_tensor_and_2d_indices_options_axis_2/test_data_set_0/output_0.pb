
BoutputJ`!Ф!Ф!ФOФРФРФРФЉО‘U‘U‘UЅС{Q{Q{QRzRzRzR>Q…ј…ј…јMТҐUҐUҐUфRќQќQќQSjIjIjIмМ¶Р¶Р¶РdQN;N;N;іЗqNqNqNљT