BoutputJÀ7„Â7„Â7„ÂãÖ‰Ây
šÂy
šÂy
šÂ©CÑÁC²BC²BC²B–7Âdd/Bdd/Bdd/B´ECB¬2OB¬2OB¬2OBëÃ'BÑ¯¿Ñ¯¿Ñ¯¿l¯IÂó’´Bó’´Bó’´Bª{^BN¯3BN¯3BN¯3B†PcB`G-A`G-A`G-Ap‹Á†ÉÂ†ÉÂ†ÉÂ;q,BŽ¹i?Ž¹i?Ž¹i?çdöÀU$ÎAU$ÎAU$ÎAˆ3“B