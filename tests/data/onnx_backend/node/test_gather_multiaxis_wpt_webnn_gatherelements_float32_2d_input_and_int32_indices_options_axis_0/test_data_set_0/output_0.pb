BoutputJ©CÑÁãÖ‰Â¬2OBdd/BC²By
šÂ