BoutputJ`G-Ap‹ÁC²B–7ÂC²B–7Âdd/B´ECB¬2OBëÃ'By
šÂ©CÑÁC²B–7ÂC²B–7ÂN¯3B†PcBU$ÎAˆ3“B¬2OBëÃ'BU$ÎAˆ3“Bó’´Bª{^Bó’´Bª{^BN¯3B†PcBdd/B´ECBU$ÎAˆ3“BŽ¹i?çdöÀ