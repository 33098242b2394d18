BoutputJ@y
šÂ©CÑÁ¹i?çdöÀ†ÉÂ;q,B7„ÂãÖ‰Âdd/B´ECBÑ¯¿l¯IÂdd/B´ECB`G-Ap‹Á