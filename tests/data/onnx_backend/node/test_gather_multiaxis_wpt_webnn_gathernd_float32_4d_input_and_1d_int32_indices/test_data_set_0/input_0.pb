BinputJ@7„ÂãÖ‰Ây
šÂ©CÑÁC²B–7Âdd/B´ECB¬2OBëÃ'BÑ¯¿l¯IÂó’´Bª{^BN¯3B†PcB