BoutputJ07„ÂãÖ‰Ây
šÂ©CÑÁC²B–7Âdd/B´ECB¬2OBëÃ'BÑ¯¿l¯IÂ